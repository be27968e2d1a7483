#if DEBUG
import Synchronization

extension Identity {
    /// Counts the `sub`s and relay addresses computed by the code it is bound around (debug
    /// builds only): tests prove a lookup hashes nothing, whatever runs on other threads.
    final class DerivationCounter: Sendable {
        private let value = Atomic<Int>(0)

        /// A counter at zero.
        init() {}

        /// How many identifiers were computed while it was bound.
        var count: Int { value.load(ordering: .relaxed) }

        /// Counts one.
        func increment() { value.add(1, ordering: .relaxed) }
    }

    /// The counter of the running scope, if a test bound one (`$derivationCounter.withValue`).
    @TaskLocal static var derivationCounter: DerivationCounter?
}
#endif

import Synchronization

/// Real time that only the test moves, so a running mock clock is deterministic (rule 10): no
/// sleeping, no timing assertions.
final class ManualRealTime: Sendable {
    private let value: Mutex<Double>

    /// Real time starting at `start` seconds since 1970.
    init(_ start: Double) { value = Mutex(start) }

    /// The current real time.
    var now: Double { value.withLock { $0 } }

    /// Moves real time on by `seconds`.
    func advance(by seconds: Double) { value.withLock { $0 += seconds } }
}

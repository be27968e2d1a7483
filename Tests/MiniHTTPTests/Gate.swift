import Dispatch
import Synchronization

/// A latch the test opens by hand. Deferred handlers wait on it with `Task.sleep` polls, so the
/// order of events is decided by the test, never by how long something takes.
final class Gate: Sendable {
    private let opened = Atomic<Bool>(false)
    private let entered = DispatchSemaphore(value: 0)
    private let arrivals = Atomic<Int>(0)

    /// True once `open()` was called.
    var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// True once a handler reached `pass()` (for async tests, which must not wait on a semaphore).
    var hasEntered: Bool { arrivals.load(ordering: .acquiring) > 0 }

    /// Lets every waiting and future `pass()` through.
    func open() { opened.store(true, ordering: .releasing) }

    /// Signals that a handler arrived, then suspends until the gate is open.
    func pass() async throws {
        arrivals.add(1, ordering: .releasing)
        entered.signal()
        while !isOpen { try await Task.sleep(for: .milliseconds(5)) }
    }

    /// Blocks the (synchronous) test until a handler reached `pass()`; false after `seconds`.
    func waitUntilEntered(seconds: Double = 5) -> Bool {
        entered.wait(timeout: .now() + seconds) == .success
    }
}

import Dispatch

/// Runs blocking work — RSA key generation for `POST /__mock/keys`, rotations and clock moves that
/// reach the rotation pattern — on one dedicated thread, off the I/O loops and off Swift's
/// cooperative pool, so it never starves the deferred handlers that share that pool (probe
/// finding N7: four clients rotating keys pushed `/__mock/id-token` to 0.3 s). The caller
/// suspends until its job is done; jobs run one at a time, in order. Each mock has its own, so
/// mocks in one process (a test suite) never wait for each other's keys. The caller's
/// `EventCollector` goes along: the request journal still sees the events the work recorded.
final class BlockingWork: Sendable {
    private let queue = DispatchQueue(label: "appleid-mock.blocking-work", qos: .utility)

    /// Runs `body` on the dedicated thread and returns what it returned, or throws what it threw.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        let collector = EventCollector.current
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
            queue.async {
                continuation.resume(with: Result { try EventCollector.$current.withValue(collector) { try body() } })
            }
        }
    }

    /// Runs `body`, which cannot fail, on the dedicated thread.
    func run(_ body: @escaping @Sendable () -> Void) async {
        let collector = EventCollector.current
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async {
                EventCollector.$current.withValue(collector) { body() }
                continuation.resume()
            }
        }
    }
}

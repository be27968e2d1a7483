import Dispatch

/// Runs blocking work — RSA key generation for every operation that publishes a key (the domain
/// sends it here itself), and the rotation tick — on one dedicated thread, off the I/O loops and off Swift's
/// cooperative pool, so it never starves the deferred handlers that share that pool (four
/// clients rotating keys pushed `/__mock/id-token` to 0.3 s). The caller
/// suspends until its job is done; jobs run one at a time, in order. Each mock has its own, so
/// mocks in one process (a test suite) never wait for each other's keys. The caller's
/// `EventCollector` goes along: the request journal still sees the events the work recorded.
final class BlockingWork: Sendable {
    private let queue = DispatchQueue(label: "appleid-mock.blocking-work", qos: .utility)

    /// Runs `body` on the dedicated thread and returns what it returned.
    func run<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        let collector = EventCollector.current
        return await withCheckedContinuation { (continuation: CheckedContinuation<Value, Never>) in
            queue.async {
                continuation.resume(returning: EventCollector.$current.withValue(collector) { body() })
            }
        }
    }
}

import Dispatch
import Glibc
import Synchronization

/// Where the mock says what it decided on its own (a fallback, a warning) and why it refused a
/// request: one line each on standard error.
///
/// Lines are queued and written by one writer thread, never by the thread that serves a request:
/// a stderr nobody reads (a full pipe, a paused terminal, a blocking container log driver) must
/// not stall the I/O loops or the cooperative pool. The queue holds at most `maxQueuedBytes`;
/// lines beyond it are dropped and counted, and the count is written once the writer catches up.
enum AppleIDMockLog {
    /// Most bytes waiting to be written before lines are dropped.
    static let maxQueuedBytes = 1 << 20

    private static let writer = DispatchQueue(label: "appleid-mock.log", qos: .utility)
    private static let queued = Atomic<Int>(0)
    private static let dropped = Atomic<Int>(0)

    /// Queues `appleid-mock: <message>` and a newline for standard error.
    @Sendable static func standardError(_ message: String) {
        let line = Array("appleid-mock: \(message)\n".utf8)
        let (reserved, _) = queued.add(line.count, ordering: .relaxed)
        guard reserved - line.count < maxQueuedBytes else {
            queued.subtract(line.count, ordering: .relaxed)
            dropped.add(1, ordering: .relaxed)
            return
        }
        writer.async {
            reportDropped()
            write(line)
            queued.subtract(line.count, ordering: .relaxed)
        }
    }

    /// Suspends until every line queued so far is written, or `seconds` pass (a stderr nobody
    /// reads must not keep the process from exiting); true when all were written. Holds no
    /// thread: the writer, or a dispatch deadline, resumes it.
    @discardableResult
    static func flush(seconds: Double = 2) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = ResumeOnce(continuation)
            writer.async {
                reportDropped()
                once.resume(returning: true)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { once.resume(returning: false) }
        }
    }

    /// On the writer: says how many lines were dropped since it last said so.
    private static func reportDropped() {
        let lost = dropped.exchange(0, ordering: .relaxed)
        if lost > 0 { write(Array("appleid-mock: \(lost) log line\(lost == 1 ? "" : "s") dropped: stderr was not read fast enough\n".utf8)) }
    }

    private static func write(_ line: [UInt8]) {
        var sent = 0
        while sent < line.count {
            let count = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + sent, $0.count - sent) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            sent += count
        }
    }
}

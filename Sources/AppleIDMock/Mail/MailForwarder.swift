import Dispatch
import MiniHTTP
import Synchronization

/// Sends forwarded and direct mail on to a real catcher (`--mail-forward smtp://HOST:PORT`, such
/// as Mailpit) from one thread of its own, off the event loops: the SMTP client blocks. Copies
/// wait in a queue bounded by count and bytes; one that does not fit fails at once and says so
/// in its record, as do the ones still queued when the mock stops.
final class MailForwarder: Sendable {
    /// One copy to send.
    struct Job: Sendable {
        /// The mailbox record it belongs to.
        var recordID: UInt64
        /// The envelope sender.
        var sender: String
        /// The envelope recipients: the real address of a forwarded one, the address itself for direct mail.
        var recipients: [String]
        /// Header lines this copy gets in front of the message (`Received:`, `Delivered-To:`).
        var prefix: [UInt8]
        /// The message as received, shared by every copy of it (joined to `prefix` only on the
        /// forwarder's thread, never on an event loop).
        var data: [UInt8]
    }

    /// Most copies waiting at once.
    static let maxQueued = 1000
    /// Most message bytes waiting at once.
    static let maxQueuedBytes = 64 * 1024 * 1024

    /// `smtp://HOST:PORT`.
    let target: String
    private let client: SMTPClient
    private let mailbox: MailBox
    private let queue = Mutex<(jobs: [Job], bytes: Int, stopped: Bool)>(([], 0, false))
    private let ready = DispatchSemaphore(value: 0)
    private let log: @Sendable (String) -> Void

    /// The host and port of `target` when it is `smtp://HOST:PORT`.
    static func parse(_ target: String) -> (host: String, port: Int)? {
        guard target.hasPrefix("smtp://") else { return nil }
        var rest = target.dropFirst("smtp://".count)
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        let host: Substring
        let portText: Substring
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { return nil }
            portText = after.dropFirst()
        } else {
            guard let colon = rest.lastIndex(of: ":") else { return nil }
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        }
        guard !host.isEmpty, host.utf8.count <= 253, !host.contains("/"), !host.contains("@"),
              portText.utf8.count <= 5, portText.utf8.allSatisfy({ (48...57).contains($0) }), let port = Int(portText),
              (1...65535).contains(port) else { return nil }
        return (String(host), port)
    }

    init?(target: String, mailbox: MailBox, log: @escaping @Sendable (String) -> Void) {
        guard let (host, port) = Self.parse(target) else { return nil }
        self.target = target
        var client = SMTPClient(host: host, port: port)
        client.heloName = "appleid-mock"
        client.connectTimeout = 5
        client.commandTimeout = 30
        self.client = client
        self.mailbox = mailbox
        self.log = log
    }

    /// Starts the sending thread.
    func start() {
        LoopThread.start(name: "appleid-mock-mail-forward") { [self] in run() }
    }

    /// Queues a copy; false (and the record marked failed) when the queue is full or stopped.
    @discardableResult
    func enqueue(_ job: Job) -> Bool {
        let accepted = queue.withLock { queue in
            guard !queue.stopped, queue.jobs.count < Self.maxQueued, queue.bytes + job.data.count <= Self.maxQueuedBytes else { return false }
            queue.jobs.append(job)
            queue.bytes += job.data.count
            return true
        }
        if accepted {
            ready.signal()
        } else {
            mailbox.copySent(of: job.recordID, error: "the forwarding queue is full (or the mock is stopping)")
        }
        return accepted
    }

    /// Ends the thread after the copy being sent; the queued ones are marked failed.
    func stop() {
        let dropped = queue.withLock { queue in
            defer {
                queue.jobs = []
                queue.bytes = 0
            }
            queue.stopped = true
            return queue.jobs
        }
        for job in dropped { mailbox.copySent(of: job.recordID, error: "not sent: the mock stopped") }
        ready.signal()
    }

    private func run() {
        while true {
            ready.wait()
            let next = queue.withLock { queue -> Job?? in
                if queue.stopped { return .some(nil) }
                guard !queue.jobs.isEmpty else { return nil }
                let job = queue.jobs.removeFirst()
                queue.bytes -= job.data.count
                return job
            }
            guard let job = next else { continue }
            guard let job else { return }
            do {
                try client.send(sender: job.sender, recipients: job.recipients, data: job.prefix + job.data)
                mailbox.copySent(of: job.recordID, error: nil)
            } catch {
                mailbox.copySent(of: job.recordID, error: error.description)
                log("mail \(job.recordID) not forwarded to \(target): \(error.description)")
            }
        }
    }
}

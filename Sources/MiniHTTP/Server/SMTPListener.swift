import Synchronization

/// The SMTP port: every client is an `SMTPConnection` whose `SMTPSession` asks the configuration's
/// handler. It keeps what SMTP's sessions share: their count, against `maxSessions`, and the
/// message bytes they hold, against `maxBufferedMessageBytes` (SMTP's own budget: mail never holds
/// what HTTP's requests need).
final class SMTPListener: ServerListener {
    let socket: ListeningSocket
    let configuration: SMTPServerConfiguration
    private let sessions = Atomic<Int>(0)
    private let bufferedMessages = Atomic<Int>(0)

    init(socket: ListeningSocket, configuration: SMTPServerConfiguration) {
        self.socket = socket
        self.configuration = configuration
    }

    var wantsPeer: Bool { false }

    var shortestTimeout: Double {
        min(configuration.idleTimeout, configuration.writeTimeout, configuration.dataTimeout, configuration.dataRateWindow)
    }

    /// Counts a new session; past `maxSessions` the client is told 421 and let go.
    func admit(_ fd: Int32) -> Bool {
        if sessions.add(1, ordering: .relaxed).newValue <= configuration.maxSessions { return true }
        sessions.subtract(1, ordering: .relaxed)
        let busy = Array("421 4.7.0 \(configuration.hostname) Error: too many connections\r\n".utf8)
        var wants: UInt32 = 0
        _ = busy.withUnsafeBytes { SocketIO.write(fd, nil, $0.baseAddress!, $0.count, wants: &wants) }
        return false
    }

    /// Uncounts a session (one that never started, or one that closed).
    func abandon() {
        sessions.subtract(1, ordering: .relaxed)
    }

    func connection(fd: Int32, id: UInt64, peer: HTTPPeerAddress?, loop: EventLoop, now: UInt64) -> (any LoopConnection)? {
        SMTPConnection(id: id, fd: fd, loop: loop, listener: self, now: now)
    }

    /// Reserves `count` more message bytes; false (and nothing reserved) when that would pass the budget.
    func reserveMessageBytes(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        let budget = configuration.maxBufferedMessageBytes
        guard count <= budget else { return false }
        if bufferedMessages.add(count, ordering: .relaxed).newValue > budget {
            bufferedMessages.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Returns `count` message bytes to the budget.
    func releaseMessageBytes(_ count: Int) {
        guard count > 0 else { return }
        bufferedMessages.subtract(count, ordering: .relaxed)
    }

    /// Whether half of the budget is held: sessions must then keep `minDataRate`.
    var messageBudgetUnderPressure: Bool {
        bufferedMessages.load(ordering: .relaxed) * 2 >= configuration.maxBufferedMessageBytes
    }

    /// Message bytes reserved now.
    var reservedMessageBytes: Int { bufferedMessages.load(ordering: .relaxed) }
}

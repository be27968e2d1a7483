import Synchronization

/// What every event loop of one server shares: its configuration, routes, listener, the
/// connection count and the request-body budget.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let routes: RouteTable
    let listener: ListeningSocket
    /// The SMTP port's socket, when the server carries SMTP (`configuration.smtp`).
    let smtpListener: ListeningSocket?
    /// Connections held at once: `configuration.maxConnections` capped by the descriptor limit.
    let maxConnections: Int
    private let open = Atomic<Int>(0)
    /// Request-body bytes reserved by all connections, against `configuration.maxBufferedBodyBytes`.
    private let bufferedBody = Atomic<Int>(0)
    /// SMTP sessions held, against `configuration.smtp.maxSessions`.
    private let smtpSessions = Atomic<Int>(0)
    /// Message bytes reserved by SMTP sessions, against `configuration.smtp.maxBufferedMessageBytes`
    /// (SMTP's own budget: mail never holds what HTTP's requests need).
    private let bufferedMessages = Atomic<Int>(0)
    /// The running loops, for spreading accepted connections; emptied when the server ends so
    /// that loops and core do not keep each other alive.
    private let loops = Mutex<[EventLoop]>([])
    private let placements = Atomic<Int>(0)
    private let interestChanges = Atomic<Int>(0)

    init(configuration: HTTPServerConfiguration, routes: RouteTable, listener: ListeningSocket, smtpListener: ListeningSocket? = nil,
         maxConnections: Int) {
        self.configuration = configuration
        self.routes = routes
        self.listener = listener
        self.smtpListener = smtpListener
        self.maxConnections = maxConnections
    }

    /// Counts a new connection; false when the server is full.
    func reserveConnection() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        if now > maxConnections {
            open.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Uncounts a closed connection.
    func releaseConnection() {
        open.subtract(1, ordering: .relaxed)
    }

    /// Reserves `count` more body bytes; false (and nothing reserved) when that would pass the budget.
    func reserveBodyBytes(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        guard count <= configuration.maxBufferedBodyBytes else { return false }
        let now = bufferedBody.add(count, ordering: .relaxed).newValue
        if now > configuration.maxBufferedBodyBytes {
            bufferedBody.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Whether `count` more body bytes would fit the budget now (nothing is reserved).
    func hasRoomForBodyBytes(_ count: Int) -> Bool {
        count <= 0 || count <= configuration.maxBufferedBodyBytes - bufferedBody.load(ordering: .relaxed)
    }

    /// Returns `count` body bytes to the budget.
    func releaseBodyBytes(_ count: Int) {
        guard count > 0 else { return }
        bufferedBody.subtract(count, ordering: .relaxed)
    }

    /// Counts a new SMTP session; false when SMTP holds `maxSessions` already.
    func reserveSMTPSession() -> Bool {
        let now = smtpSessions.add(1, ordering: .relaxed).newValue
        if now > (configuration.smtp?.maxSessions ?? 0) {
            smtpSessions.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Uncounts an SMTP session.
    func releaseSMTPSession() {
        smtpSessions.subtract(1, ordering: .relaxed)
    }

    /// Reserves `count` more message bytes of SMTP's budget; false (and nothing reserved) when
    /// that would pass it.
    func reserveMessageBytes(_ count: Int) -> Bool {
        guard count > 0 else { return true }
        let budget = configuration.smtp?.maxBufferedMessageBytes ?? 0
        guard count <= budget else { return false }
        let now = bufferedMessages.add(count, ordering: .relaxed).newValue
        if now > budget {
            bufferedMessages.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Returns `count` message bytes to SMTP's budget.
    func releaseMessageBytes(_ count: Int) {
        guard count > 0 else { return }
        bufferedMessages.subtract(count, ordering: .relaxed)
    }

    /// Whether half of SMTP's budget is held: sessions must then keep `minDataRate`.
    var messageBudgetUnderPressure: Bool {
        bufferedMessages.load(ordering: .relaxed) * 2 >= (configuration.smtp?.maxBufferedMessageBytes ?? 0)
    }

    /// Message bytes reserved now.
    var reservedMessageBytes: Int { bufferedMessages.load(ordering: .relaxed) }

    /// Records the loops once they exist.
    func adopt(_ running: [EventLoop]) {
        loops.withLock { $0 = running }
    }

    /// Forgets the loops (the server has ended).
    func forgetLoops() {
        loops.withLock { $0 = [] }
    }

    /// The loop that serves the next accepted connection, in turn. Whichever loop the kernel
    /// wakes accepts a burst of connections at once; handing them round keeps every core busy.
    func loopForNewConnection() -> EventLoop? {
        // The counter wraps (Atomic adds wrap); the mask keeps the index non-negative regardless.
        let turn = placements.add(1, ordering: .relaxed).oldValue & Int.max
        return loops.withLock { $0.isEmpty ? nil : $0[turn % $0.count] }
    }

    /// Connections open now.
    var openConnections: Int { open.load(ordering: .relaxed) }

    /// Counts one change of a connection's epoll registration.
    func countInterestChange() {
        interestChanges.wrappingAdd(1, ordering: .relaxed)
    }

    /// Changes of connections' epoll registrations since start.
    var interestChangeCount: Int { interestChanges.load(ordering: .relaxed) }

    /// Body bytes reserved now.
    var reservedBodyBytes: Int { bufferedBody.load(ordering: .relaxed) }
}

import Synchronization

/// What every event loop of one server shares: its configuration, its listener table, the
/// connection count and the request-body budget.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    /// Every port the server listens on, each making its own connections; a loop's epoll token
    /// for entry `i` is `i + 1` (0 is its wakeup).
    let listeners: [any ServerListener]
    /// Connections held at once: `configuration.maxConnections` capped by the descriptor limit.
    let maxConnections: Int
    private let open = Atomic<Int>(0)
    /// Request-body bytes reserved by all connections, against `configuration.maxBufferedBodyBytes`.
    private let bufferedBody = Atomic<Int>(0)
    /// The running loops, for spreading accepted connections; emptied when the server ends so
    /// that loops and core do not keep each other alive.
    private let loops = Mutex<[EventLoop]>([])
    private let placements = Atomic<Int>(0)
    private let interestChanges = Atomic<Int>(0)

    /// How often the loops sweep their connections' timeouts: four times within the shortest
    /// timeout any listener's connections keep, every 5 to 250 ms.
    let sweepMilliseconds: Int32

    init(configuration: HTTPServerConfiguration, listeners: [any ServerListener], maxConnections: Int) {
        self.configuration = configuration
        self.listeners = listeners
        let quarter = (listeners.map(\.shortestTimeout).min() ?? 1) * 1000 / 4
        // Clamped, NaN included: the conversion must not trap on a configuration's odd timeout.
        sweepMilliseconds = quarter.isNaN ? 250 : Int32(max(5, min(250, quarter)))
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

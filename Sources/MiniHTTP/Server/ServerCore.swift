import Synchronization

/// What every event loop of one server shares: its configuration, routes, listener and the
/// connection count.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let routes: RouteTable
    let listener: ListeningSocket
    private let open = Atomic<Int>(0)
    /// The running loops, for spreading accepted connections; emptied when the server ends so
    /// that loops and core do not keep each other alive.
    private let loops = Mutex<[EventLoop]>([])
    private let placements = Atomic<Int>(0)

    init(configuration: HTTPServerConfiguration, routes: RouteTable, listener: ListeningSocket) {
        self.configuration = configuration
        self.routes = routes
        self.listener = listener
    }

    /// Counts a new connection; false when the server is full.
    func reserveConnection() -> Bool {
        let now = open.add(1, ordering: .relaxed).newValue
        if now > configuration.maxConnections {
            open.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Uncounts a closed connection.
    func releaseConnection() {
        open.subtract(1, ordering: .relaxed)
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
        let turn = placements.add(1, ordering: .relaxed).oldValue
        return loops.withLock { $0.isEmpty ? nil : $0[turn % $0.count] }
    }

    /// Connections open now.
    var openConnections: Int { open.load(ordering: .relaxed) }
}

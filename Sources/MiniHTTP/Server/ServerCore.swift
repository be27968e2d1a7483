import Synchronization

/// What every event loop of one server shares: its configuration, routes, listener and the
/// connection count.
final class ServerCore: Sendable {
    let configuration: HTTPServerConfiguration
    let routes: RouteTable
    let listener: ListeningSocket
    private let open = Atomic<Int>(0)

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

    /// Connections open now.
    var openConnections: Int { open.load(ordering: .relaxed) }
}

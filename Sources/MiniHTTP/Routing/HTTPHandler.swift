/// A request handler and where it runs.
public enum HTTPHandler: Sendable {
    /// Runs on the connection's I/O thread: for cheap, non-blocking work (a cached document).
    case immediate(@Sendable (HTTPRequest) throws -> HTTPResponse)
    /// Runs as a task on the cooperative pool: for work that costs CPU (signing) or waits.
    case deferred(@Sendable (HTTPRequest) async throws -> HTTPResponse)
}

import MiniHTTP

extension Router {
    /// Routes `method path` to an endpoint of Apple's whose refusals `log` writes with their reason.
    /// `summary` and `reads` (the fields it takes) describe the route in `RouteTable.routes`.
    mutating func add(_ method: HTTPMethod, _ path: String, apple handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse,
                      logging log: RequestLog, summary: String, reads: [String] = []) {
        add(method, path, log.apple(path, handler), summary: summary, reads: reads)
    }

    /// Routes `method path` to `handler`, whose answers `log` writes at `debug`.
    mutating func add(_ method: HTTPMethod, _ path: String, logging log: RequestLog, _ handler: HTTPHandler, summary: String, reads: [String] = []) {
        add(method, path, log.other(path, handler), summary: summary, reads: reads)
    }
}

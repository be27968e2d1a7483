import MiniHTTP

extension Router {
    /// Routes `method path` to an endpoint of Apple's whose refusals `log` writes with their reason.
    mutating func add(_ method: HTTPMethod, _ path: String, apple handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse,
                      logging log: RequestLog) {
        add(method, path, log.apple(path, handler))
    }

    /// Routes `method path` to `handler`, whose answers `log` writes at `debug`.
    mutating func add(_ method: HTTPMethod, _ path: String, logging log: RequestLog, _ handler: HTTPHandler) {
        add(method, path, log.other(path, handler))
    }
}

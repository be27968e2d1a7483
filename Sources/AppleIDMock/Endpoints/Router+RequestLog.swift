import MiniHTTP

extension Router {
    /// Routes `method path` to an endpoint of Apple's whose refusals `log` writes with their reason.
    /// `summary` and `reads` (the fields it takes) describe the route in `RouteTable.routes`.
    /// With `faults`, the faults installed for the route act on its requests first. Every answer
    /// says `Server: Apple`, as Apple's do.
    mutating func add(_ method: HTTPMethod, _ path: String, apple handler: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse,
                      logging log: RequestLog, faults: FaultGate? = nil, summary: String, reads: [String] = []) {
        let logged = log.apple(path, handler)
        add(method, path, AppleResponse.servedByApple(faults?.gate(logged) ?? logged), summary: summary, reads: reads)
    }

    /// Routes `method path` to an endpoint of Apple's that refuses nothing (the keys, discovery):
    /// its answers are logged at `debug`, faults act first, and every answer says `Server: Apple`.
    mutating func add(_ method: HTTPMethod, _ path: String, appleLogging log: RequestLog, faults: FaultGate? = nil, _ handler: HTTPHandler,
                      summary: String, reads: [String] = []) {
        let logged = log.other(path, handler)
        add(method, path, AppleResponse.servedByApple(faults?.gate(logged) ?? logged), summary: summary, reads: reads)
    }

    /// Routes `method path` to `handler`, whose answers `log` writes at `debug`.
    mutating func add(_ method: HTTPMethod, _ path: String, logging log: RequestLog, _ handler: HTTPHandler, summary: String, reads: [String] = []) {
        add(method, path, log.other(path, handler), summary: summary, reads: reads)
    }
}

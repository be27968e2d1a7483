/// Collects routes at setup time; `build()` freezes them into an immutable `RouteTable`
/// (setup builds, run time reads).
public struct Router: Sendable {
    private var routes: [String: [HTTPMethod: HTTPHandler]] = [:]
    private var info: [String: [HTTPMethod: RouteInfo]] = [:]
    private var fallback: HTTPHandler?
    private var prefixFallbacks: [RouteTable.PrefixFallback] = []

    /// An empty router.
    public init() {}

    /// Routes `method` on `path` to `handler`. A GET route also answers HEAD. `path` is exact,
    /// or a template with `{name}` segments whose values the handler reads from
    /// `request.pathParameters`; an exact path always wins over a template that matches it.
    /// `summary` and `reads` (the request fields it reads) are listed by `RouteTable.routes`.
    public mutating func add(_ method: HTTPMethod, _ path: String, _ handler: HTTPHandler, summary: String = "", reads: [String] = []) {
        routes[path, default: [:]][method] = handler
        info[path, default: [:]][method] = RouteInfo(method: method, template: path, summary: summary, reads: reads)
    }

    /// Routes `method path` to a handler that runs on the I/O thread.
    public mutating func add(_ method: HTTPMethod, _ path: String, immediate: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) {
        add(method, path, .immediate(immediate))
    }

    /// Routes `method path` to a handler that runs as a task.
    public mutating func add(_ method: HTTPMethod, _ path: String, deferred: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) {
        add(method, path, .deferred(deferred))
    }

    /// Answers requests for unknown paths (default: plain-text 404).
    public mutating func setNotFound(_ handler: HTTPHandler) {
        fallback = handler
    }

    /// Answers the requests under `prefix` (a plain string prefix of the path) that no route
    /// takes, in place of the defaults: `notFound` for a path with no route, and, for a routed
    /// path asked with a method it lacks, the handler `methodNotAllowed` makes at `build()` from
    /// the methods the path has (its answer sets `Allow` itself, RFC 9110 §15.5.6). Where
    /// prefixes nest, the longest wins; other paths keep `setNotFound` and the plain 405.
    public mutating func setFallbacks(under prefix: String, notFound: HTTPHandler,
                                      methodNotAllowed: @escaping @Sendable ([HTTPMethod]) -> HTTPHandler) {
        prefixFallbacks.removeAll { $0.prefix == prefix }
        prefixFallbacks.append(RouteTable.PrefixFallback(prefix: prefix, notFound: notFound, methodNotAllowed: methodNotAllowed))
    }

    /// The immutable table the server reads at run time.
    public func build() -> RouteTable {
        RouteTable(routes: routes, info: info.values.flatMap(\.values), notFound: fallback, prefixFallbacks: prefixFallbacks)
    }
}

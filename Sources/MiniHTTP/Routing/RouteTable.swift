/// An immutable map from (method, path) to handler, built by `Router`.
public struct RouteTable: Sendable {
    /// What a lookup found.
    public enum Resolution: Sendable {
        /// The handler for this method and path.
        case handler(HTTPHandler)
        /// The path exists but not with this method; `allow` lists the methods it has.
        case methodNotAllowed(allow: [HTTPMethod])
        /// No such path.
        case notFound(HTTPHandler?)
    }

    private let routes: [String: [HTTPMethod: HTTPHandler]]
    private let notFound: HTTPHandler?

    init(routes: [String: [HTTPMethod: HTTPHandler]], notFound: HTTPHandler?) {
        self.routes = routes
        self.notFound = notFound
    }

    /// Every routed path, sorted.
    public var paths: [String] { routes.keys.sorted() }

    /// Looks up `method` on `path` (exact match, HEAD falls back to GET).
    public func resolve(_ method: HTTPMethod, _ path: String) -> Resolution {
        guard let methods = routes[path] else { return .notFound(notFound) }
        if let handler = methods[method] { return .handler(handler) }
        if method == .head, let handler = methods[.get] { return .handler(handler) }
        var allow = Array(methods.keys)
        if methods[.get] != nil && methods[.head] == nil { allow.append(.head) }
        return .methodNotAllowed(allow: allow.sorted())
    }

    /// The response for `request`, for handlers that run inline or as tests calling directly.
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        switch resolve(request.method, request.path) {
        case .handler(let handler): return await Self.run(handler, request)
        case .methodNotAllowed(let allow): return Self.methodNotAllowed(allow)
        case .notFound(let handler):
            guard let handler else { return .plainError(.notFound) }
            return await Self.run(handler, request)
        }
    }

    /// The 405 response with its `Allow` header (RFC 9110 §15.5.6).
    static func methodNotAllowed(_ allow: [HTTPMethod]) -> HTTPResponse {
        var response = HTTPResponse.plainError(.methodNotAllowed)
        response.headers.add("Allow", allow.map(\.rawValue).joined(separator: ", "))
        return response
    }

    static func run(_ handler: HTTPHandler, _ request: HTTPRequest) async -> HTTPResponse {
        switch handler {
        case .immediate(let body): return convert { try body(request) }
        case .deferred(let body):
            do { return try await body(request) } catch { return response(for: error) }
        }
    }

    static func convert(_ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return response(for: error) }
    }

    static func response(for error: any Error) -> HTTPResponse {
        if let known = error as? any HTTPResponseError { return known.response }
        HTTPServerLog.write("handler error: \(error)")
        return .plainError(.internalServerError)
    }
}

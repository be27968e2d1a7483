/// An immutable map from (method, path) to handler, built by `Router`: exact paths in a
/// dictionary, looked up first; then path templates (`/__mock/keys/{kid}`), most literal first.
public struct RouteTable: Sendable {
    /// What a lookup found.
    public enum Resolution: Sendable {
        /// The handler for this method and path.
        case handler(HTTPHandler)
        /// The path exists but not with this method; `allow` lists the methods it has, and
        /// `handler` answers when a prefix's fallbacks cover the path (else the plain 405).
        case methodNotAllowed(allow: [HTTPMethod], handler: HTTPHandler?)
        /// No such path; the handler of its prefix, or the table's, answers when set.
        case notFound(HTTPHandler?)
    }

    /// What `Router.setFallbacks(under:…)` set for one prefix.
    struct PrefixFallback: Sendable {
        let prefix: String
        let notFound: HTTPHandler
        let methodNotAllowed: @Sendable ([HTTPMethod]) -> HTTPHandler
    }

    /// One path template's routes, and its 405 handler when a prefix's fallbacks cover it.
    private struct TemplateRoutes: Sendable {
        let template: PathTemplate
        let methods: [HTTPMethod: HTTPHandler]
        let methodNotAllowed: HTTPHandler?
    }

    private let exact: [String: [HTTPMethod: HTTPHandler]]
    private let templates: [TemplateRoutes]
    /// Every route's metadata, sorted by template then method.
    public let routes: [RouteInfo]
    private let notFound: HTTPHandler?
    /// The not-found handler of each prefix, longest prefix first.
    private let prefixNotFound: [(prefix: String, handler: HTTPHandler)]
    /// The 405 handler of each routed path under a prefix with fallbacks, made at build.
    private let methodNotAllowed: [String: HTTPHandler]
    /// Which route takes a request, without the handlers.
    public let names: RouteNames

    init(routes: [String: [HTTPMethod: HTTPHandler]], info: [RouteInfo] = [], notFound: HTTPHandler?, prefixFallbacks: [PrefixFallback] = []) {
        self.notFound = notFound
        let longestFirst = prefixFallbacks.sorted { $0.prefix.utf8.count > $1.prefix.utf8.count }
        prefixNotFound = longestFirst.map { ($0.prefix, $0.notFound) }
        func fallback(_ path: String, _ methods: [HTTPMethod: HTTPHandler]) -> HTTPHandler? {
            longestFirst.first { path.hasPrefix($0.prefix) }.map { $0.methodNotAllowed(Self.allowed(methods)) }
        }
        exact = routes.filter { !PathTemplate.isTemplate($0.key) }
        var methodNotAllowed: [String: HTTPHandler] = [:]
        for (path, methods) in exact { methodNotAllowed[path] = fallback(path, methods) }
        self.methodNotAllowed = methodNotAllowed
        // The most literal segments first, then by text: which template takes a path never
        // depends on the order routes were added.
        templates = routes.filter { PathTemplate.isTemplate($0.key) }
            .map { path, methods in TemplateRoutes(template: PathTemplate(path), methods: methods, methodNotAllowed: fallback(path, methods)) }
            .sorted { left, right in
                let (a, b) = (left.template, right.template)
                return a.literalCount != b.literalCount ? a.literalCount > b.literalCount : a.text < b.text
            }
        self.routes = info.sorted { ($0.template, $0.method.rawValue) < ($1.template, $1.method.rawValue) }
        names = RouteNames(exact: exact.mapValues { Set($0.keys) }, templates: templates.map { ($0.template, Set($0.methods.keys)) })
    }

    /// Every routed path and template, sorted.
    public var paths: [String] { (Array(exact.keys) + templates.map(\.template.text)).sorted() }

    /// Looks up `method` on `path` (exact match, HEAD falls back to GET).
    public func resolve(_ method: HTTPMethod, _ path: String) -> Resolution {
        match(method, path).resolution
    }

    /// The route that answers `method` on `path`: the exact path or the template that takes it
    /// (`/__mock/keys/{kid}`); nil when a fallback or MiniHTTP answers. For logs and journals.
    public func route(_ method: HTTPMethod, _ path: String) -> String? {
        names.route(method, path)
    }

    /// Looks up `method` on `path`: an exact path first (a dictionary hit, nothing else when
    /// it is there), then the templates; the parameters of the template that matched.
    private func match(_ method: HTTPMethod, _ path: String) -> (resolution: Resolution, parameters: [String: String]) {
        if let methods = exact[path] {
            return (Self.resolution(method, methods, methodNotAllowed: methodNotAllowed[path]), [:])
        }
        for routes in templates {
            if let parameters = routes.template.match(path) {
                return (Self.resolution(method, routes.methods, methodNotAllowed: routes.methodNotAllowed), parameters)
            }
        }
        return (.notFound(prefixNotFound.first { path.hasPrefix($0.prefix) }?.handler ?? notFound), [:])
    }

    /// What a routed path answers `method` with (HEAD falls back to GET).
    private static func resolution(_ method: HTTPMethod, _ methods: [HTTPMethod: HTTPHandler], methodNotAllowed: HTTPHandler?) -> Resolution {
        if let handler = methods[method] { return .handler(handler) }
        if method == .head, let handler = methods[.get] { return .handler(handler) }
        return .methodNotAllowed(allow: Self.allowed(methods), handler: methodNotAllowed)
    }

    /// The methods a path with `methods` answers, sorted: HEAD wherever GET is.
    private static func allowed(_ methods: [HTTPMethod: HTTPHandler]) -> [HTTPMethod] {
        var allow = Array(methods.keys)
        if methods[.get] != nil && methods[.head] == nil { allow.append(.head) }
        return allow.sorted()
    }

    /// The handler that answers `request`: its route's, else the fallback of its prefix or of
    /// the table, else the plain 405 (with `Allow`) or 404. The one place a request is matched to
    /// its answer: the server's connections and `respond(to:)` both start here. A template's
    /// parameters go into `request.pathParameters`.
    func handler(for request: inout HTTPRequest) -> HTTPHandler {
        let (resolution, parameters) = match(request.method, request.path)
        if !parameters.isEmpty { request.pathParameters = parameters }
        switch resolution {
        case .handler(let handler), .methodNotAllowed(_, .some(let handler)), .notFound(.some(let handler)):
            return handler
        case .methodNotAllowed(let allow, .none):
            return .immediate { _ in Self.methodNotAllowed(allow) }
        case .notFound(.none):
            return Self.plainNotFound
        }
    }

    /// The answer to a path no route or fallback takes.
    private static let plainNotFound = HTTPHandler.immediate { _ in .plainError(.notFound) }

    /// The response for `request`, as a server would answer it (the handler's response, before
    /// the serializer adds framing headers): tests and fuzzers drive the table in memory with it.
    public func respond(to request: HTTPRequest, log: @Sendable (String) -> Void = HTTPServerLog.write) async -> HTTPResponse {
        var request = request
        let handler = handler(for: &request)
        return await Self.run(handler, request, log: log)
    }

    /// The 405 response with its `Allow` header (RFC 9110 §15.5.6).
    static func methodNotAllowed(_ allow: [HTTPMethod]) -> HTTPResponse {
        var response = HTTPResponse.plainError(.methodNotAllowed)
        response.headers.add("Allow", allow.map(\.rawValue).joined(separator: ", "))
        return response
    }

    /// Runs `handler` for `request`; what it throws becomes its response.
    static func run(_ handler: HTTPHandler, _ request: HTTPRequest, log: @Sendable (String) -> Void) async -> HTTPResponse {
        switch handler {
        case .immediate(let body): return convert(log: log) { try body(request) }
        case .deferred(let body):
            do { return try await body(request) } catch { return response(for: error, log: log) }
        }
    }

    /// Runs an immediate handler's `body`; what it throws becomes its response.
    static func convert(log: (String) -> Void, _ body: () throws -> HTTPResponse) -> HTTPResponse {
        do { return try body() } catch { return response(for: error, log: log) }
    }

    /// The response for a handler's error: its own when it knows one, else a logged 500.
    static func response(for error: any Error, log: (String) -> Void) -> HTTPResponse {
        if let known = error as? any HTTPResponseError { return known.response }
        log("handler error: \(error)")
        return .plainError(.internalServerError)
    }
}

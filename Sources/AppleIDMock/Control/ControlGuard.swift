import Glibc
import MiniHTTP

/// Keeps the `/__mock` control API to local tools and same-origin callers.
///
/// A web page open in a developer's browser must not be able to drive the mock: it could post a
/// "simple" cross-site request (`text/plain`, no preflight), or reach the mock through a DNS name
/// it rebinds to 127.0.0.1 and read the id_tokens it mints. So a control request is refused when
///
/// - its `Host` is a name other than `localhost` or one the operator allowed (`--allowed-host`,
///   the host of `--base-url`): a rebinding page always arrives under its own DNS name, while IP
///   literals are what local tools and containers use;
/// - it carries an `Origin` other than the mock's own (`http(s)://` + its `Host`): browsers send
///   `Origin` on every cross-origin POST, with or without a body;
/// - it has a body that is not `application/json`, which forces a CORS preflight on any browser
///   request the mock never answers.
///
/// None of that stops a direct caller on a network (an IP-literal `Host`, no `Origin`): with a
/// control token (`serve --control-token`), every control route also needs
/// `Authorization: Bearer <token>`, but for `tokenFreePaths`.
///
/// Apple's own routes are not guarded: they stay exactly as Apple serves them.
struct ControlGuard: Sendable {
    /// Lower-cased names accepted besides IP literals and `localhost`.
    let allowedHosts: Set<String>
    /// The bearer token every control request but the health check must carry, when set.
    private let token: [UInt8]?

    /// The path that answers without the token: container health checks carry no secret.
    static let healthPath = "/__mock/health"

    /// The paths that answer without the token (the Host and Origin checks still apply): the
    /// health check, and the dashboard's page, script and style sheet and the redirect to the page,
    /// which a browser's navigation fetches without a bearer token; they are static bytes with no
    /// state. The dashboard's data (`/__mock/dashboard`) needs the token like every other route.
    static let tokenFreePaths: Set<String> = DashboardEndpoint.tokenFreePaths.union([healthPath])

    /// A guard accepting `allowedHosts` (case-insensitive) besides IP literals and `localhost`,
    /// and, when `token` is given, only requests that carry it.
    init(allowedHosts: [String], token: String? = nil) {
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
        self.token = token.map { Array($0.utf8) }
    }

    /// `handler`, answering refused requests itself.
    func wrap(_ handler: HTTPHandler) -> HTTPHandler {
        switch handler {
        case .immediate(let body):
            return .immediate { [self] request in try refusal(request) ?? body(request) }
        case .deferred(let body):
            return .deferred { [self] request in
                if let refused = refusal(request) { return refused }
                return try await body(request)
            }
        }
    }

    /// The refusal for `request`, or nil when it may proceed.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        let host = request.headers["Host"]
        if let host, !isAllowed(host: host) {
            return ControlResponse.error("Host \"\(host.prefix(100))\" is not allowed for the control API (allow a name with --allowed-host)",
                                         field: "Host", status: HTTPStatus(403))
        }
        if let origin = request.headers["Origin"] {
            let sameOrigin = host.map { host in
                let lower = origin.lowercased()
                return lower == "http://" + host.lowercased() || lower == "https://" + host.lowercased()
            } ?? false
            guard sameOrigin else {
                return ControlResponse.error("cross-origin requests to the control API are refused", field: "Origin", status: HTTPStatus(403))
            }
        }
        if let token, !Self.tokenFreePaths.contains(request.path), !Self.carries(token, request.headers["Authorization"]) {
            var response = ControlResponse.error("the control API needs Authorization: Bearer <the --control-token the mock was started with>",
                                                 field: "Authorization", status: HTTPStatus(401))
            response.headers.set("WWW-Authenticate", #"Bearer realm="appleid-mock""#)
            return response
        }
        if !request.body.isEmpty && request.mediaType != "application/json" {
            return ControlResponse.error("expected Content-Type: application/json", field: "Content-Type", status: .unsupportedMediaType)
        }
        return nil
    }

    /// Whether `authorization` is `Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1),
    /// compared in time that depends only on the lengths, never on where the bytes differ.
    static func carries(_ token: [UInt8], _ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let value = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        guard value.count == scheme.count + token.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<scheme.count - 1 {
            // "Bearer": ASCII letters fold to lower case with 0x20.
            difference |= (value[index] | 0x20) ^ scheme[index]
        }
        difference |= value[scheme.count - 1] ^ 0x20
        for index in 0..<token.count {
            difference |= value[scheme.count + index] ^ token[index]
        }
        return difference == 0
    }

    /// Whether a `Host` value (`name`, `name:port`, `[v6]:port`) names this mock acceptably.
    func isAllowed(host value: String) -> Bool {
        var name = Substring(value.lowercased())
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let after = name[name.index(after: close)...]
            guard after.isEmpty || Self.isPort(after) else { return false }
            return Self.isIPv6(String(name[name.index(after: name.startIndex)..<close]))
        }
        if let colon = name.lastIndex(of: ":") {
            guard Self.isPort(name[colon...]) else { return false }
            name = name[..<colon]
        }
        let host = String(name)
        return host == "localhost" || host.hasSuffix(".localhost") || Self.isIPv4(host) || allowedHosts.contains(host)
    }

    private static func isPort(_ text: Substring) -> Bool {
        text.first == ":" && (2...6).contains(text.utf8.count) && text.dropFirst().utf8.allSatisfy { (48...57).contains($0) }
    }

    private static func isIPv4(_ text: String) -> Bool {
        var address = in_addr()
        return inet_pton(AF_INET, text, &address) == 1
    }

    private static func isIPv6(_ text: String) -> Bool {
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }
}

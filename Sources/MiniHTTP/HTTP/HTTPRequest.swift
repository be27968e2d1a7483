/// A complete, parsed HTTP/1.x request.
public struct HTTPRequest: Sendable {
    /// The method token.
    public var method: HTTPMethod
    /// The request-target exactly as sent (origin form: path and optional query).
    public var target: String
    /// The path part of the target, still percent-encoded.
    public var path: String
    /// The query part of the target without the `?`, still encoded; nil when there is none.
    public var query: String?
    /// Minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    public var minorVersion: Int
    /// Header fields in order.
    public var headers: HTTPHeaders
    /// The body, de-chunked.
    public var body: [UInt8]
    /// The named segments of the route template that matched (`{kid}` → `["kid": …]`), still
    /// percent-encoded; empty for an exact route.
    public var pathParameters: [String: String] = [:]

    /// Builds a request; `path` and `query` are split from `target`.
    public init(method: HTTPMethod, target: String, minorVersion: Int = 1, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.target = target
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            path = target
            query = nil
        }
        self.minorVersion = minorVersion
        self.headers = headers
        self.body = body
    }

    /// Whether the connection stays open after this request (RFC 9112 §9.3).
    public var wantsKeepAlive: Bool {
        if headers.contains("Connection", token: "close") { return false }
        if minorVersion == 0 { return headers.contains("Connection", token: "keep-alive") }
        return true
    }

    /// The media type of the body without parameters, lower-cased (`application/json`).
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        return value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingSpaces().lowercasedASCII() }
    }

    /// The decoded query parameters; throws on malformed encoding.
    public func queryParameters() throws(HTTPFormError) -> HTTPForm {
        try HTTPForm(decoding: Array((query ?? "").utf8))
    }
}

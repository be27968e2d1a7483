/// A response for the server to serialize. `Content-Length` is added by the server.
public struct HTTPResponse: Sendable {
    /// Status line code and reason.
    public var status: HTTPStatus
    /// Header fields in the order they are sent.
    public var headers: HTTPHeaders
    /// The body bytes.
    public var body: [UInt8]
    /// Never sent: what the handler tells the server's `HTTPExchangeObserver` about this answer
    /// (`HTTPExchange.note`), such as why it refused the request.
    public var note: (any Sendable)?
    /// How the server delivers it: at once and whole unless a fault says otherwise.
    public var delivery: HTTPDelivery = .normal

    /// A response with the given parts.
    public init(status: HTTPStatus = .ok, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A `text/plain; charset=utf-8` response.
    public static func text(_ text: String, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "text/plain; charset=utf-8"], body: Array(text.utf8))
    }

    /// The plain-text body the HTTP layer sends for its own errors: `"<code> <reason>\n"`.
    public static func plainError(_ status: HTTPStatus) -> HTTPResponse {
        text("\(status.code) \(status.reason)\n", status: status)
    }
}

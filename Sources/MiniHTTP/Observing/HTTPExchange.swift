/// One request and its answer as the server saw them, handed to the configuration's
/// `HTTPExchangeObserver`: handler answers, MiniHTTP's own answers (400, 404, 405, 408, 413, 431,
/// 503 …) and requests cut off before they were answered.
public struct HTTPExchange: Sendable {
    /// Unique per server, from 1. Each event loop numbers its own (loop i of n: i + 1, i + 1 + n,
    /// …), so ids increase along one connection, not across connections.
    public var id: UInt64
    /// The client's address; nil when the kernel did not give one.
    public var peer: HTTPPeerAddress?
    /// Whether the exchange went over TLS: false for a plaintext request to the TLS port (`plaintextOnTLSPort`).
    public var isTLS: Bool
    /// The request, body included (within the parser's `HTTPLimits`); nil when no complete
    /// request was read (a parse error, a timeout or a close mid-request).
    public var request: HTTPRequest?
    /// The status sent; nil when the exchange was cut off and nothing was answered.
    public var status: HTTPStatus?
    /// The response's header fields as the handler set them (framing headers are the server's).
    public var responseHeaders: HTTPHeaders
    /// Body bytes sent (0 for a HEAD request and when nothing was answered).
    public var responseBodyCount: Int
    /// Monotonic microseconds from the request's first byte to its answer being queued (or the
    /// exchange being cut off).
    public var microseconds: UInt64
    /// Why MiniHTTP answered or ended the exchange itself; nil when a route's handler answered.
    public var reason: Reason?
    /// What the handler attached to its answer for the observer (`HTTPResponse.note`).
    public var note: (any Sendable)?

    /// An exchange from its parts: for observers driven without a server (an in-memory table).
    public init(id: UInt64, peer: HTTPPeerAddress? = nil, isTLS: Bool = false, request: HTTPRequest?, status: HTTPStatus?,
                responseHeaders: HTTPHeaders = HTTPHeaders(), responseBodyCount: Int = 0, microseconds: UInt64 = 0, reason: Reason? = nil,
                note: (any Sendable)? = nil) {
        self.id = id
        self.peer = peer
        self.isTLS = isTLS
        self.request = request
        self.status = status
        self.responseHeaders = responseHeaders
        self.responseBodyCount = responseBodyCount
        self.microseconds = microseconds
        self.reason = reason
        self.note = note
    }

    /// Why MiniHTTP, not a handler, ended an exchange.
    public enum Reason: Sendable, Equatable, CustomStringConvertible {
        /// The bytes were not a request MiniHTTP takes (the status says which limit or rule).
        case unparsable(HTTPParseError)
        /// The request's body did not fit the server's `maxBufferedBodyBytes` (503).
        case bodyBudgetExhausted
        /// The request did not arrive within its timeout (408).
        case timedOut
        /// A plaintext HTTP request came to the TLS port (400).
        case plaintextOnTLSPort
        /// The client closed its side before the request was complete or answered.
        case peerClosed
        /// The connection failed or was closed (a socket error, the server stopping) before an answer.
        case connectionClosed

        /// A short phrase for logs.
        public var description: String {
            switch self {
            case .unparsable(let error): "unparsable request: \(error)"
            case .bodyBudgetExhausted: "request bodies exceed the server's buffer budget"
            case .timedOut: "request timed out"
            case .plaintextOnTLSPort: "plaintext HTTP on the TLS port"
            case .peerClosed: "client closed the connection mid-request"
            case .connectionClosed: "connection closed before an answer"
            }
        }
    }
}

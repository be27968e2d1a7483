/// Why a request could not be parsed. Each case knows the status the server answers with;
/// after any of them the connection is closed.
public enum HTTPParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Request line plus headers over `HTTPLimits.maxHeadBytes` (431).
    case headTooLarge
    /// More header fields than `HTTPLimits.maxHeaderCount` (431).
    case tooManyHeaders
    /// Body over `HTTPLimits.maxBodyBytes` (413).
    case bodyTooLarge
    /// Both Content-Length and Transfer-Encoding (400, RFC 9112 §6.1 request smuggling guard).
    case conflictingFraming
    /// A transfer coding other than `chunked` (501).
    case unsupportedTransferEncoding
    /// An HTTP version other than 1.0 or 1.1 (505).
    case unsupportedVersion
    /// Anything else that breaks the grammar (400), with a short reason.
    case malformed(String)

    /// The status the server answers with.
    public var status: HTTPStatus {
        switch self {
        case .headTooLarge, .tooManyHeaders: .headerFieldsTooLarge
        case .bodyTooLarge: .contentTooLarge
        case .conflictingFraming, .malformed: .badRequest
        case .unsupportedTransferEncoding: .notImplemented
        case .unsupportedVersion: .versionNotSupported
        }
    }

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .headTooLarge: "request line and headers exceed the limit"
        case .tooManyHeaders: "too many header fields"
        case .bodyTooLarge: "request body exceeds the limit"
        case .conflictingFraming: "both Content-Length and Transfer-Encoding"
        case .unsupportedTransferEncoding: "unsupported Transfer-Encoding"
        case .unsupportedVersion: "unsupported HTTP version"
        case .malformed(let reason): reason
        }
    }
}

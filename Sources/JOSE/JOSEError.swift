/// Errors thrown by the JOSE layer.
public enum JOSEError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Key material was unreadable, of the wrong type or curve, or too weak.
    case invalidKey(String)
    /// An OpenSSL call failed for a reason other than bad input; `reason` is OpenSSL's own text.
    case openSSL(call: String, reason: String)
    /// A compact JWS (or a JWK / JWK Set) was structurally wrong.
    case malformedJWS(String)
    /// The header or key names an algorithm this layer does not implement.
    case unsupportedAlgorithm(String)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case let .invalidKey(detail): return "invalid key: \(detail)"
        case let .openSSL(call, reason): return "\(call) failed: \(reason)"
        case let .malformedJWS(detail): return "malformed JWS: \(detail)"
        case let .unsupportedAlgorithm(name): return "unsupported algorithm: \(name)"
        }
    }
}

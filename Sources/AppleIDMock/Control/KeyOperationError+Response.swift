import JOSE
import MiniHTTP

extension KeyOperationError: HTTPResponseError {
    /// 404 for an unknown kid, 409 for a conflict; the body names the kid.
    public var response: HTTPResponse {
        let (message, kid, status): (String, String, HTTPStatus) = switch self {
        case .unknown(let kid): ("no key with this kid", kid, .notFound)
        case .duplicate(let kid): ("a key with this kid exists already", kid, HTTPStatus(409))
        case .retiringActive(let kid): ("the key signs new tokens: activate another key before retiring it", kid, HTTPStatus(409))
        case .retired(let kid): ("the key is retired", kid, HTTPStatus(409))
        case .tooMany(let kid, let limit):
            ("\(limit) keys are published already, the most signing_keys.max_published allows: retire one first (rotate retires the oldest itself)",
             kid, HTTPStatus(409))
        case .keySequenceMoved:
            ("other key operations kept publishing keys meanwhile (--seed derives each key from its place): try again", "", HTTPStatus(409))
        }
        var extra = JSONObject()
        extra["kid"] = .string(kid)
        if case .tooMany(_, let limit) = self { extra["limit"] = .int(Int64(limit)) }
        return ControlResponse.error(message, field: "kid", status: status, extra: extra)
    }
}

import JOSE
import MiniHTTP

extension KeyOperationError: HTTPResponseError {
    /// 404 for an unknown kid, 409 for a conflict, 500 when no key could be made; the body names
    /// the kid.
    package var response: HTTPResponse {
        let status: HTTPStatus = switch self {
        case .unknown: .notFound
        case .generationFailed: .internalServerError
        case .duplicate, .retiringActive, .retired, .tooMany, .keySequenceMoved: HTTPStatus(409)
        }
        var extra = JSONObject()
        extra["kid"] = .string(keyID)
        if case .tooMany(_, let limit) = self { extra["limit"] = .int(Int64(limit)) }
        return ControlResponse.error(message, field: "kid", status: status, extra: extra)
    }
}

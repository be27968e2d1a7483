import MiniHTTP

extension AccountEventError: HTTPResponseError {
    /// `{"error": message, "field": field}`: 400 for bad input, 404 for an unknown user or
    /// client, 409 for what the current state does not allow.
    package var response: HTTPResponse {
        let status: HTTPStatus = switch kind {
        case .invalid: .badRequest
        case .unknown: .notFound
        case .notPossible: HTTPStatus(409)
        }
        return ControlResponse.error(message, field: field, status: status)
    }
}

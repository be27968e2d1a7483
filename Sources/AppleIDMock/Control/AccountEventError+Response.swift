import MiniHTTP

extension AccountEventError: HTTPResponseError {
    /// `{"error": message, "field": field}` with the error's status (400, 404 or 409).
    public var response: HTTPResponse { ControlResponse.error(message, field: field, status: HTTPStatus(status)) }
}

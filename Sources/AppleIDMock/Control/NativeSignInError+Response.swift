import MiniHTTP

extension AppleIDDomain.NativeSignInError: HTTPResponseError {
    /// `{"error": message, "field": field}`, 400: the control API's bad-input answer.
    package var response: HTTPResponse { ControlResponse.error(message, field: field, status: .badRequest) }
}

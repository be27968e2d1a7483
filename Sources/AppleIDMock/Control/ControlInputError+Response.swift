import MiniHTTP

extension ControlInputError: HTTPResponseError {
    /// 400 `{"error": message, "field": field}`.
    package var response: HTTPResponse { ControlResponse.error(message, field: field) }
}

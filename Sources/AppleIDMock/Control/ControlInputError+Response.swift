import MiniHTTP

extension ControlInputError: HTTPResponseError {
    /// 400 `{"error": message, "field": field}`.
    public var response: HTTPResponse { ControlResponse.error(message, field: field) }
}

import MiniHTTP

extension CapacityError: HTTPResponseError {
    /// 503 `{"error": message, "field": null}`: the mock is full, the request was fine.
    package var response: HTTPResponse { ControlResponse.error(message, field: nil, status: .serviceUnavailable) }
}

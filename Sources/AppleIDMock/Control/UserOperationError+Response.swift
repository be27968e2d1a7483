import MiniHTTP

extension UserOperationError: HTTPResponseError {
    /// 409 for a duplicate id, 503 when the mock holds as many users as it will.
    package var response: HTTPResponse {
        switch self {
        case .duplicate(let id): ControlResponse.error("a user with id \"\(id)\" exists already", field: "id", status: HTTPStatus(409))
        case .full(let limit): ControlResponse.error("the mock holds \(limit) users", field: nil, status: .serviceUnavailable)
        }
    }
}

import MiniHTTP

extension AppleIDDomain.SignInRefusal: HTTPResponseError {
    /// 400 `{"error": message, "field": field}` for a request at fault; 503 when the mock is
    /// full; 500 when it could not sign.
    package var response: HTTPResponse {
        switch self {
        case .invalid(let field, let message): ControlResponse.error(message, field: field, status: .badRequest)
        case .full(let full): full.response
        case .signing(let reason): ControlResponse.error("the token could not be signed: \(reason)", field: nil, status: .internalServerError)
        }
    }
}

import JOSE
import MiniHTTP

/// An authorize request `POST /__mock/authorize` could not carry out, in the control API's
/// words: the message, the field and Apple's code (`apple_error`); 503 when the mock is full.
struct HeadlessAuthorizeRefusal: Error, HTTPResponseError {
    /// What Apple's authorize endpoint would have refused with.
    let error: AuthorizeError

    /// `{"error", "field", "apple_error"}`, 400 (503 when the mock is full).
    var response: HTTPResponse {
        var extra = JSONObject()
        extra["apple_error"] = .string(error.code)
        return ControlResponse.error(error.message, field: error.field, status: error.rendering == .unavailable ? .serviceUnavailable : .badRequest,
                                     extra: extra)
    }
}

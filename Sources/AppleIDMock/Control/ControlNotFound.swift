import MiniHTTP

/// Something a control request names does not exist (a client, a user): 404 in the control
/// API's JSON, naming the field.
struct ControlNotFound: Error, HTTPResponseError {
    /// What is missing.
    let message: String
    /// The field that named it.
    let field: String

    /// `{"error": message, "field": field}`, 404.
    var response: HTTPResponse { ControlResponse.error(message, field: field, status: .notFound) }
}

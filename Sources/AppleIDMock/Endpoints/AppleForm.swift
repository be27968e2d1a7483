import MiniHTTP

/// Reads the form body of Apple's POST endpoints (apple-reference.md §1.3): form encoding only.
enum AppleForm {
    /// The fields of a form-encoded request. A body of another type (JSON, say) is the error the
    /// scenario's `token_content_type_error` names (`invalid_request` per TN3107 [D],
    /// `invalid_client` as observed, §1.3 [O]); one that is not valid form encoding is
    /// `invalid_client` (TN3107); a repeated field is `invalid_request` (TN3107).
    static func fields(_ request: HTTPRequest, _ compatibility: Compatibility) throws(OAuthError) -> [String: String] {
        if request.mediaType != "application/x-www-form-urlencoded" && (!request.body.isEmpty || request.headers["Content-Type"] != nil) {
            let type = request.headers["Content-Type"].map { "Content-Type \(LogText.clip($0))" } ?? "no Content-Type"
            throw OAuthError(compatibility.tokenContentTypeError).because("body has \(type), not application/x-www-form-urlencoded")
        }
        guard let form = try? HTTPForm(decoding: request.body) else { throw .invalidClient.because("body is not valid form encoding") }
        if let name = form.duplicatedNames.first { throw .invalidRequest.because("parameter \(LogText.clip(name)) repeated") }
        var fields: [String: String] = [:]
        for (name, value) in form { fields[name] = value }
        return fields
    }
}

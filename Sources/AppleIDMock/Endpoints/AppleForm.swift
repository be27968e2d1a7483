import MiniHTTP

/// Reads the form body of Apple's POST endpoints (apple-reference.md §1.3): form encoding only.
enum AppleForm {
    /// The fields of a form-encoded request. A body of another type (JSON, say) or one that is
    /// not valid form encoding is `invalid_client` (§1.3 [O], TN3107); a repeated field is
    /// `invalid_request` (TN3107).
    static func fields(_ request: HTTPRequest) throws(OAuthError) -> [String: String] {
        if !request.body.isEmpty && request.mediaType != "application/x-www-form-urlencoded" { throw .invalidClient }
        guard let form = try? HTTPForm(decoding: request.body) else { throw .invalidClient }
        if !form.duplicatedNames.isEmpty { throw .invalidRequest }
        var fields: [String: String] = [:]
        for (name, value) in form { fields[name] = value }
        return fields
    }

    /// Apple's 400 with `Cache-Control: no-store` (§2.1).
    static func error(_ error: OAuthError) -> HTTPResponse {
        AppleResponse.noStoreJSON(error.json, status: .badRequest)
    }
}

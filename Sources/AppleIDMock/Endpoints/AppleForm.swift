import JOSE
import MiniHTTP

/// Reads the form body of Apple's POST endpoints (apple-behaviour.md §1.3): form encoding only.
enum AppleForm {
    /// The fields of a form-encoded request. A JSON body is the error the scenario's
    /// `token_json_body_error` names (`invalid_client` as observed at Apple, §1.3 [O]); any other
    /// body that is not form-encoded (text, multipart, no type) is `invalid_request`, TN3107's
    /// error for a bad content type (§2.1 [D]); one that is not valid form encoding is
    /// `invalid_client` (TN3107); a repeated field is `invalid_request` (TN3107).
    static func fields(_ request: HTTPRequest, _ compatibility: Compatibility) throws(OAuthError) -> [String: String] {
        if request.mediaType != "application/x-www-form-urlencoded" && (!request.body.isEmpty || request.headers["Content-Type"] != nil) {
            let type = request.headers["Content-Type"].map { "Content-Type \(LogText.clip($0))" } ?? "no Content-Type"
            if isJSON(request) {
                throw OAuthError(compatibility.tokenJSONBodyError).because("body is JSON (\(type)), not application/x-www-form-urlencoded")
            }
            throw OAuthError.invalidRequest.because("body has \(type), not application/x-www-form-urlencoded")
        }
        guard let form = try? HTTPForm(decoding: request.body) else { throw .invalidClient.because("body is not valid form encoding") }
        if let name = form.duplicatedNames.first { throw .invalidRequest.because("parameter \(LogText.clip(name)) repeated") }
        var fields: [String: String] = [:]
        for (name, value) in form { fields[name] = value }
        return fields
    }

    /// Whether a body that is not a form is JSON: labelled `application/json` (or `…+json`,
    /// RFC 6839), or a JSON object whatever its label.
    private static func isJSON(_ request: HTTPRequest) -> Bool {
        if let type = request.mediaType, type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json")) { return true }
        // Only a body that opens with `{` is worth parsing.
        guard request.body.first(where: { ![9, 10, 13, 32].contains($0) }) == UInt8(ascii: "{") else { return false }
        guard case .object? = try? JSONParser.parse(request.body) else { return false }
        return true
    }
}

import FoundationEssentials
import JOSE
import MiniHTTP

/// The backend `appleid-mock audit --native URL` attacks: where an app posts its credential, and
/// how (`--method`, `--body`). By default a `POST` of `{"identityToken": …, "authorizationCode":
/// …}` as JSON, the credential's own field names; a template is JSON when it starts with `{` or
/// `[`, else a form, with `{{identity_token}}`, `{{authorization_code}}` and `{{user}}` filled in
/// (JSON-escaped or percent-encoded as the body needs).
struct AuditNativeBackend: AuditTarget {
    /// The placeholders a template may use; it must use at least one.
    static let placeholders = ["{{identity_token}}", "{{authorization_code}}", "{{user}}"]

    let url: String
    let method: String
    let template: String?
    var http: HTTPClient
    /// The mock, which signs the user in as an iOS device would.
    let mock: ControlClient
    let clientID: String
    let user: String

    var description: String { url }

    /// An app's backend has no nonce of its own to compare.
    func applies(_ defect: String) -> Bool { defect != "nonce-mismatch" }

    /// A native sign-in at the mock (`POST /__mock/sign-in`, its `defect` spoiling the
    /// identityToken and the id_token the code is exchanged for), posted to the backend.
    func attempt(defect: String?) throws -> AuditAttempt {
        var body: JSONObject = ["user": .string(user), "client_id": .string(clientID)]
        if let defect { body["defect"] = .string(defect) }
        let text = try mock.call("POST", "/__mock/sign-in", body: body)
        guard case .object(let answer)? = try? JSONParser.parse(Array(text.utf8)), let token = answer["identityToken"]?.stringValue,
              let code = answer["authorizationCode"]?.stringValue, let sub = answer["user"]?.stringValue else {
            throw CommandFailure(message: "the mock's /__mock/sign-in answered no credential: \(text)", status: 1)
        }
        return AuditAttempt(result: deliver(identityToken: token, authorizationCode: code, user: sub), code: code)
    }

    /// Whether `template` is JSON (else a form).
    var isJSON: Bool { template.map { $0.first == "{" || $0.first == "[" } ?? true }

    /// The body and content type for one credential.
    func body(identityToken: String, authorizationCode: String, user: String) -> (bytes: [UInt8], contentType: String) {
        guard let template else {
            let object: JSONObject = ["identityToken": .string(identityToken), "authorizationCode": .string(authorizationCode)]
            return (JSONWriter.sortedCompact(.object(object)), "application/json")
        }
        let values = [identityToken, authorizationCode, user].map { value in
            isJSON ? String(decoding: JSONWriter.sortedCompact(.string(value)).dropFirst().dropLast(), as: UTF8.self) : Self.percentEncoded(value)
        }
        var text = template
        for (placeholder, value) in zip(Self.placeholders, values) { text = text.replacing(placeholder, with: value) }
        return (Array(text.utf8), isJSON ? "application/json" : "application/x-www-form-urlencoded")
    }

    /// Posts one credential; the backend's answer, or why there was none.
    func deliver(identityToken: String, authorizationCode: String, user: String) -> Result<HTTPClient.Response, HTTPClient.Failure> {
        let (bytes, contentType) = body(identityToken: identityToken, authorizationCode: authorizationCode, user: user)
        do {
            return .success(try http.send(method, url: url, headers: [("Content-Type", contentType)], body: bytes))
        } catch {
            return .failure(error)
        }
    }

    /// RFC 3986 unreserved characters kept, everything else percent-encoded.
    static func percentEncoded(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            if (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || "-._~".utf8.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

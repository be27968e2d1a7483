import JOSE
import MiniHTTP

/// Answers of the `/__mock` control API: JSON with sorted keys; errors name the field at fault.
enum ControlResponse {
    /// A JSON answer with sorted keys.
    static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONWriter.sortedCompact(value))
    }

    /// The prefix of every control path.
    static let prefix = "/__mock/"

    /// 404 for a path under `/__mock/` that is no control route.
    static func notFound(_ request: HTTPRequest) -> HTTPResponse {
        error("no control route at \(LogText.clip(request.path))", field: nil, status: .notFound)
    }

    /// 405 for a control route asked with a method it lacks, naming the ones it has in the body
    /// and in `Allow` (RFC 9110 §15.5.6).
    static func methodNotAllowed(_ allow: [HTTPMethod]) -> HTTPResponse {
        let methods = allow.map(\.rawValue).joined(separator: ", ")
        var response = error("method not allowed (allowed: \(methods))", field: nil, status: .methodNotAllowed)
        response.headers.add("Allow", methods)
        return response
    }

    /// `{"error": message, "field": field}` with status 400 (or as given).
    static func error(_ message: String, field: String?, status: HTTPStatus = .badRequest, extra: JSONObject = JSONObject()) -> HTTPResponse {
        var body = extra
        body["error"] = .string(message)
        body["field"] = field.map(JSONValue.string) ?? .null
        return json(.object(body), status: status)
    }
}

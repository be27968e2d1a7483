import JOSE
import MiniHTTP

/// Answers of the `/__mock` control API: JSON with sorted keys; errors name the field at fault.
enum ControlResponse {
    /// A JSON answer with sorted keys.
    static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONWriter.sortedCompact(value))
    }

    /// `{"error": message, "field": field}` with status 400 (or as given).
    static func error(_ message: String, field: String?, status: HTTPStatus = .badRequest, extra: JSONObject = JSONObject()) -> HTTPResponse {
        var body = extra
        body["error"] = .string(message)
        body["field"] = field.map(JSONValue.string) ?? .null
        return json(.object(body), status: status)
    }
}

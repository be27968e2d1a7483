import JOSE
import MiniHTTP

/// A control API request body: a JSON object whose fields are read by name; every failure
/// names the field at fault.
struct ControlRequest {
    /// A bad request: its message and field, rendered as a 400 (or as `status` says).
    struct Failure: Error, HTTPResponseError {
        let message: String
        let field: String?
        var status: HTTPStatus = .badRequest

        var response: HTTPResponse { ControlResponse.error(message, field: field, status: status) }
    }

    let object: JSONObject

    /// Parses the body as a JSON object with only the fields `operation` declares (an empty body is `{}`).
    init(_ request: HTTPRequest, for operation: ControlOperation) throws(Failure) {
        try self.init(request, known: operation.bodyFields)
    }

    /// Parses the body as a JSON object with only `known` fields (an empty body is `{}`).
    private init(_ request: HTTPRequest, known: [String]) throws(Failure) {
        if request.body.isEmpty {
            object = JSONObject()
            return
        }
        guard let value = try? JSONParser.parse(request.body) else { throw Failure(message: "body is not valid JSON", field: nil) }
        guard case .object(let object) = value else { throw Failure(message: "body must be a JSON object", field: nil) }
        for key in object.keys where !known.contains(key) {
            throw Failure(message: "unknown field (expected one of: \(known.joined(separator: ", ")))", field: key)
        }
        self.object = object
    }

    /// A required string field.
    func string(_ name: String) throws(Failure) -> String {
        guard let value = try optionalString(name) else { throw Failure(message: "missing required field", field: name) }
        return value
    }

    /// An optional string field (absent or null is nil) of at most `maxBytes` UTF-8 bytes (4 KiB unless said).
    func optionalString(_ name: String, maxBytes: Int = 4096) throws(Failure) -> String? {
        guard let value = object[name], value != .null else { return nil }
        guard case .string(let string) = value else { throw Failure(message: "expected a string", field: name) }
        guard string.utf8.count <= maxBytes else { throw Failure(message: "expected at most \(maxBytes) bytes", field: name) }
        return string
    }

    /// An optional token defect (`TokenDefect`'s names).
    func optionalDefect(_ name: String = "defect") throws(Failure) -> TokenDefect? {
        guard let text = try optionalString(name, maxBytes: 64) else { return nil }
        guard let defect = TokenDefect(rawValue: text) else {
            throw Failure(message: "unknown defect \"\(text)\" (expected one of: \(TokenDefect.names.joined(separator: ", ")))", field: name)
        }
        return defect
    }

    /// An optional JSON object field.
    func optionalObject(_ name: String) throws(Failure) -> JSONObject? {
        guard let value = object[name], value != .null else { return nil }
        guard case .object(let object) = value else { throw Failure(message: "expected a JSON object", field: name) }
        return object
    }

    /// An optional boolean field.
    func optionalBool(_ name: String) throws(Failure) -> Bool? {
        guard let value = object[name], value != .null else { return nil }
        guard case .bool(let flag) = value else { throw Failure(message: "expected true or false", field: name) }
        return flag
    }

    /// An optional integer field.
    func optionalInt(_ name: String) throws(Failure) -> Int64? {
        guard let value = object[name], value != .null else { return nil }
        guard case .int(let number) = value else { throw Failure(message: "expected an integer", field: name) }
        return number
    }

    /// An optional array of strings.
    func optionalStrings(_ name: String) throws(Failure) -> [String]? {
        guard let value = object[name], value != .null else { return nil }
        guard case .array(let items) = value else { throw Failure(message: "expected an array of strings", field: name) }
        var strings: [String] = []
        guard items.count <= 16 else { throw Failure(message: "expected at most 16 items", field: name) }
        for item in items {
            guard case .string(let string) = item, string.utf8.count <= 64 else {
                throw Failure(message: "expected an array of strings", field: name)
            }
            strings.append(string)
        }
        return strings
    }
}

extension ControlRequest {
    /// `request`'s query parameters, each one that `operation` declares: an undeclared one is
    /// refused, naming it and the declared ones.
    static func query(_ request: HTTPRequest, for operation: ControlOperation) throws(Failure) -> HTTPForm {
        guard let query = try? request.queryParameters() else { throw Failure(message: "malformed query string", field: nil) }
        let declared = operation.parameters.filter { $0.location == .query }.map(\.name)
        for (name, _) in query where !declared.contains(name) {
            throw Failure(message: "unknown parameter (expected \(declared.joined(separator: ", ")))", field: name)
        }
        return query
    }
}

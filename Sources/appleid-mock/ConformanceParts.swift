import FoundationEssentials
import JOSE

/// The parts of an answer a probe compares, each a name and a value (nil: absent), volatile
/// parts reduced to their shape: what both sides must agree on.
struct ConformanceParts: Sendable {
    /// The parts, in order.
    let parts: [(name: String, value: String?)]

    /// The value of part `name`, nil when absent.
    subscript(name: String) -> String? {
        parts.first { $0.name == name }?.value ?? nil
    }

    /// The parts `probe` compares in `answer`.
    init(_ answer: ConformanceAnswer, of probe: ConformanceProbe) {
        var parts: [(name: String, value: String?)] = [("status", String(answer.status))]
        for name in ConformanceProbe.comparedHeaders {
            let value = answer.header(name)
            parts.append((name, name == "Location" ? value.map { Self.relative($0, to: answer.origin) } : value))
        }
        switch probe.kind {
        case .discovery: parts += Self.discovery(answer)
        case .keys: parts += Self.keys(answer)
        case .oauthError: parts.append(("body", answer.text))
        case .authorizeError: parts += Self.authorizeError(answer)
        }
        self.parts = parts
    }

    /// `url` with `origin` written `{origin}` when it starts with it and a slash.
    static func relative(_ url: String, to origin: String) -> String {
        let base = origin.hasSuffix("/") ? String(origin.dropLast()) : origin
        return url.hasPrefix(base + "/") ? "{origin}" + url.dropFirst(base.count) : url
    }

    /// The answer's body as a JSON object, or nil.
    private static func object(_ answer: ConformanceAnswer) -> JSONObject? {
        guard case .object(let object)? = try? JSONParser.parse(answer.body) else { return nil }
        return object
    }

    /// What a body that is not the JSON expected is, in words.
    private static func notJSON(_ answer: ConformanceAnswer) -> String {
        answer.body.isEmpty ? "(empty)" : "(not a JSON object: \(answer.body.count) bytes)"
    }

    /// The discovery document: its members in order and each value, URLs under the answer's
    /// origin written relative to it (the mock's are under its own address, Apple's under Apple's).
    private static func discovery(_ answer: ConformanceAnswer) -> [(name: String, value: String?)] {
        guard let document = object(answer) else { return [("body", notJSON(answer))] }
        var parts: [(name: String, value: String?)] = [("body members", document.keys.joined(separator: ", "))]
        for (key, value) in document {
            let relative: JSONValue = if case .string(let text) = value { .string(Self.relative(text, to: answer.origin)) } else { value }
            parts.append(("body." + key, String(decoding: JSONWriter.compact(relative), as: UTF8.self)))
        }
        return parts
    }

    /// The key set: members, key count, each key's members and fixed values; kid and n by shape.
    private static func keys(_ answer: ConformanceAnswer) -> [(name: String, value: String?)] {
        guard let document = object(answer), let keys = document["keys"]?.arrayValue else { return [("body", notJSON(answer))] }
        var parts: [(name: String, value: String?)] = [("body members", document.keys.joined(separator: ", ")), ("keys count", String(keys.count))]
        for (index, key) in keys.enumerated() {
            let label = "keys[\(index)]"
            guard let key = key.objectValue else {
                parts.append((label, "(not an object)"))
                continue
            }
            parts.append((label + " members", key.keys.joined(separator: ", ")))
            for (name, value) in key {
                switch name {
                case "kid": parts.append((label + ".kid", value.stringValue.map(shape) ?? "(not a string)"))
                case "n": parts.append((label + ".n", value.stringValue.map(modulus) ?? "(not a string)"))
                default: parts.append((label + "." + name, String(decoding: JSONWriter.compact(value), as: UTF8.self)))
                }
            }
        }
        return parts
    }

    /// A kid's shape: its length, and whether it keeps to letters and digits.
    static func shape(_ text: String) -> String {
        let alphanumeric = text.utf8.allSatisfy { (65...90).contains($0) || (97...122).contains($0) || (48...57).contains($0) }
        return "\(text.utf8.count) characters, \(alphanumeric ? "A-Za-z0-9" : "not only A-Za-z0-9")"
    }

    /// A base64url modulus's size in bits (leading zero bytes dropped).
    static func modulus(_ text: String) -> String {
        guard let bytes = Base64URL.decode(text), let first = bytes.firstIndex(where: { $0 != 0 }) else { return "(not base64url)" }
        let leading = bytes[first].leadingZeroBitCount
        return "\((bytes.count - first) * 8 - leading)-bit"
    }

    /// An authorize error answer: its format, error code and message.
    private static func authorizeError(_ answer: ConformanceAnswer) -> [(name: String, value: String?)] {
        if let object = object(answer) {
            return [("body format", "JSON"), ("error", object["error"]?.stringValue), ("error message", object["error_description"]?.stringValue)]
        }
        let text = answer.text
        let html = (answer.header("Content-Type") ?? "").lowercased().hasPrefix("text/html") || text.hasPrefix("<")
        guard html else { return [("body format", answer.body.isEmpty ? "(empty)" : "other (\(answer.body.count) bytes)")] }
        return [("body format", "HTML page"), ("error", element("error-code", in: text) ?? knownCodes.first { text.contains($0) }),
                ("error message", element("error-message", in: text) ?? knownMessages.first { text.contains($0) })]
    }

    /// The text of the element with `id` in `html`, when it holds only text.
    private static func element(_ id: String, in html: String) -> String? {
        guard let start = html.firstRange(of: "id=\"\(id)\""), let open = html[start.upperBound...].firstIndex(of: ">") else { return nil }
        let rest = html[html.index(after: open)...]
        guard let close = rest.firstIndex(of: "<") else { return nil }
        let text = String(rest[..<close].drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        return text.isEmpty ? nil : text
    }

    /// Authorize's error codes (apple-behaviour.md §2.2).
    private static let knownCodes = ["invalid_request", "invalid_client", "unauthorized_client", "invalid_scope"]
    /// The messages of Apple's error page on record (apple-behaviour.md §2.2).
    private static let knownMessages = [
        "Invalid client id or web redirect url.", "Invalid web redirect url.",
        "response_mode must be form_post when name or email scope is requested.",
        "Request missing required parameter or unsupported parameters or invalid redirect url",
    ]
}

import MiniHTTP

/// How `appleid-mock audit` tells that a backend accepted a sign-in (`--accepted`): a status
/// class (`2xx`, the default) or an exact status (`200`), a header the answer carries
/// (`Set-Cookie`), or a pattern the body matches (`/"signed_in": *true/`).
enum AuditAcceptance: CustomStringConvertible {
    case statusClass(Int)
    case status(Int)
    case header(String)
    case body(String)

    /// The rule `text` names; nil when it is none (the CLI says so with exit 2).
    init?(_ text: String) {
        let bytes = Array(text.utf8)
        if bytes.count == 3, let first = bytes.first, (UInt8(ascii: "1")...UInt8(ascii: "5")).contains(first),
           text.lowercased().hasSuffix("xx") {
            self = .statusClass(Int(first - UInt8(ascii: "0")))
        } else if bytes.count == 3, let code = Int(text), (100...599).contains(code) {
            self = .status(code)
        } else if let first = bytes.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) {
            // A digit starts a status or a class, never a header name a backend would send.
            return nil
        } else if bytes.count >= 3, text.hasPrefix("/"), text.hasSuffix("/") {
            let pattern = String(text.dropFirst().dropLast())
            guard (try? Regex(pattern)) != nil else { return nil }
            self = .body(pattern)
        } else if !text.isEmpty, text.utf8.allSatisfy(Self.isTokenByte) {
            self = .header(text)
        } else {
            return nil
        }
    }

    /// Whether `response` counts as accepted.
    func accepts(_ response: HTTPClient.Response) -> Bool {
        switch self {
        case .statusClass(let digit): return response.status / 100 == digit
        case .status(let code): return response.status == code
        case .header(let name): return response.headers[name] != nil
        case .body(let pattern):
            guard let regex = try? Regex(pattern) else { return false }
            return String(decoding: response.body, as: UTF8.self).contains(regex)
        }
    }

    /// As the report names it.
    var description: String {
        switch self {
        case .statusClass(let digit): "\(digit)xx"
        case .status(let code): "\(code)"
        case .header(let name): "header \(name)"
        case .body(let pattern): "body /\(pattern)/"
        }
    }

    /// An HTTP token character (RFC 9110 §5.6.2), for header names.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

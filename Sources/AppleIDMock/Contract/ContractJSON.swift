import JOSE

/// JSON as the contract file holds it: members in order and numbers as written, so a bound such as
/// 18446744073709551615 (a `UInt64` sequence number's largest) survives, which `JSONValue`'s
/// `Int64` and `Double` cannot hold exactly.
indirect enum ContractJSON: Sendable, Equatable {
    case string(String)
    case number(String)
    case bool(Bool)
    case null
    case array([ContractJSON])
    case object([Member])

    /// One member of an object.
    struct Member: Sendable, Equatable {
        let key: String
        let value: ContractJSON
    }

    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .int(let number): self = .number(String(number))
        case .double(let number): self = .number(number.description)
        case .string(let text): self = .string(text)
        case .array(let items): self = .array(items.map(ContractJSON.init))
        case .object(let object): self = .object(object.map { Member(key: $0.key, value: ContractJSON($0.value)) })
        }
    }

    /// `text` parsed: examples and header objects are declared as JSON text.
    static func parsed(_ text: String) -> ContractJSON {
        // Declarations are the code's own: a typo is a failing contract test, never input.
        guard let value = try? JSONParser.parse(text) else { return .string("unparsable JSON in a declaration: \(text)") }
        return ContractJSON(value)
    }

    /// An object from ordered pairs.
    static func members(_ pairs: [(String, ContractJSON)]) -> ContractJSON {
        .object(pairs.map { Member(key: $0.0, value: $0.1) })
    }

    /// The member `key` of an object; nil for anything else.
    subscript(key: String) -> ContractJSON? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The members of an object (none for anything else).
    var members: [Member] {
        guard case .object(let members) = self else { return [] }
        return members
    }

    /// Two-space indented, `"key": value`, a final newline: the committed file's layout.
    var pretty: String {
        var output = ""
        write(into: &output, depth: 0)
        output += "\n"
        return output
    }

    private func write(into output: inout String, depth: Int) {
        let inner = String(repeating: "  ", count: depth + 1)
        switch self {
        case .string(let text): Self.quote(text, into: &output)
        case .number(let text): output += text
        case .bool(let flag): output += flag ? "true" : "false"
        case .null: output += "null"
        case .array(let items):
            guard !items.isEmpty else { output += "[]"; return }
            output += "["
            for (index, item) in items.enumerated() {
                output += (index == 0 ? "\n" : ",\n") + inner
                item.write(into: &output, depth: depth + 1)
            }
            output += "\n" + String(repeating: "  ", count: depth) + "]"
        case .object(let members):
            guard !members.isEmpty else { output += "{}"; return }
            output += "{"
            for (index, member) in members.enumerated() {
                output += (index == 0 ? "\n" : ",\n") + inner
                Self.quote(member.key, into: &output)
                output += ": "
                member.value.write(into: &output, depth: depth + 1)
            }
            output += "\n" + String(repeating: "  ", count: depth) + "}"
        }
    }

    private static let hex = Array("0123456789abcdef")

    /// A JSON string: quote, backslash and control characters escaped, everything else as is.
    private static func quote(_ text: String, into output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case let control where control.value < 0x20:
                output += "\\u00" + String(hex[Int(control.value >> 4)]) + String(hex[Int(control.value & 0xF)])
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension ContractJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral,
    ExpressibleByFloatLiteral {
    init(stringLiteral value: String) { self = .string(value) }
    init(integerLiteral value: Int64) { self = .number(String(value)) }
    init(booleanLiteral value: Bool) { self = .bool(value) }
    init(nilLiteral: ()) { self = .null }
    init(floatLiteral value: Double) { self = .number(value.description) }
    /// A number beyond `Int64`, as written.
    static func number(_ value: UInt64) -> ContractJSON { .number(String(value)) }
}

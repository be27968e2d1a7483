/// Byte-stable JSON output.
///
/// Object members are written in stored order (or sorted by UTF-8 bytes for `sortedCompact`).
/// Strings escape only `"`, `\` and control characters (`\n \r \t \b \f`, others as lowercase
/// `\u00xx`); `/` and non-ASCII are written as is. Integers print plainly; doubles print in
/// Swift's shortest round-trip form (`1.0`, `0.1`, `1e-07`, `1e+20`); a non-finite double,
/// which JSON cannot express, is written as `null`.
public enum JSONWriter {
    /// Compact output with no whitespace, members in stored order.
    public static func compact(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, sorted: false, indent: nil, into: &output)
        return output
    }

    /// Compact output with object keys sorted recursively by their UTF-8 bytes.
    public static func sortedCompact(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        write(value, sorted: true, indent: nil, into: &output)
        return output
    }

    /// Two-space indented output with `"key": value` and a final newline.
    public static func pretty(_ value: JSONValue) -> String {
        var output: [UInt8] = []
        write(value, sorted: false, indent: 0, into: &output)
        output.append(0x0A)
        return String(decoding: output, as: UTF8.self)
    }

    /// Writes `value`; `indent` is the current depth for pretty output, nil for compact.
    private static func write(_ value: JSONValue, sorted: Bool, indent: Int?, into output: inout [UInt8]) {
        switch value {
        case .null:
            output.append(contentsOf: "null".utf8)
        case let .bool(flag):
            output.append(contentsOf: (flag ? "true" : "false").utf8)
        case let .int(number):
            output.append(contentsOf: String(number).utf8)
        case let .double(number):
            output.append(contentsOf: (number.isFinite ? number.description : "null").utf8)
        case let .string(text):
            writeString(text, into: &output)
        case let .array(elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent.map { $0 + 1 }, into: &output)
                write(element, sorted: sorted, indent: indent.map { $0 + 1 }, into: &output)
            }
            if !elements.isEmpty { newline(indent, into: &output) }
            output.append(UInt8(ascii: "]"))
        case let .object(object):
            var members = Array(object)
            if sorted {
                members.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            }
            output.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent.map { $0 + 1 }, into: &output)
                writeString(member.key, into: &output)
                output.append(UInt8(ascii: ":"))
                if indent != nil { output.append(UInt8(ascii: " ")) }
                write(member.value, sorted: sorted, indent: indent.map { $0 + 1 }, into: &output)
            }
            if !members.isEmpty { newline(indent, into: &output) }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// In pretty mode, a newline and `depth` levels of two-space indentation.
    private static func newline(_ depth: Int?, into output: inout [UInt8]) {
        guard let depth else { return }
        output.append(0x0A)
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    /// Writes a quoted, escaped string.
    private static func writeString(_ text: String, into output: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x00..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default:
                output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

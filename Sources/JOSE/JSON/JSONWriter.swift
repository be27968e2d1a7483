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

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// Writes `text` quoted, copying each run that needs no escape in one piece.
    private static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var runStart = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                writeEscape(byte, into: &output)
                runStart = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// The escape for a quote, a backslash or a control character (RFC 8259 §7).
    private static func writeEscape(_ byte: UInt8, into output: inout [UInt8]) {
        output.append(0x5C)
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        default:
            output.append(contentsOf: "u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        }
    }
}

/// The cursor behind `JSONParser`: an explicit stack of open containers instead of recursion.
struct JSONReader {
    /// An array or object that has been opened and not yet closed.
    private struct Frame {
        /// True for an object, false for an array.
        var isObject: Bool
        /// Elements read so far when this is an array.
        var elements: [JSONValue] = []
        /// Members read so far when this is an object.
        var members = JSONObject()
        /// The key whose value is being read when this is an object.
        var pendingKey = ""
    }

    /// The whole input.
    private let bytes: [UInt8]
    /// The deepest allowed container nesting.
    private let maxDepth: Int
    /// Index of the next unread byte.
    private var position = 0

    /// A reader at the start of `bytes`.
    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Reads one value and requires nothing but whitespace after it.
    mutating func readDocument() throws(JSONParseError) -> JSONValue {
        var stack: [Frame] = []
        skipWhitespace()
        while true {
            // Read the start of a value: either a whole scalar or an opening bracket.
            var value: JSONValue
            guard let byte = peek() else { throw error("unexpected end of input") }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard stack.count < maxDepth else {
                    throw error("nesting deeper than \(maxDepth) levels")
                }
                position += 1
                skipWhitespace()
                let isObject = byte == UInt8(ascii: "{")
                let closer = isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if peek() == closer {
                    position += 1
                    value = isObject ? .object(JSONObject()) : .array([])
                } else {
                    var frame = Frame(isObject: isObject)
                    if isObject {
                        frame.pendingKey = try readKey(into: frame.members)
                    }
                    stack.append(frame)
                    continue
                }
            default:
                value = try readScalar()
            }

            // Attach the finished value to its container, closing containers as they end.
            while true {
                guard !stack.isEmpty else {
                    skipWhitespace()
                    guard position == bytes.count else {
                        throw error("unexpected characters after the top-level value")
                    }
                    return value
                }
                let top = stack.count - 1
                skipWhitespace()
                if stack[top].isObject {
                    let key = stack[top].pendingKey
                    stack[top].members[key] = value
                    if peek() == UInt8(ascii: ",") {
                        position += 1
                        skipWhitespace()
                        stack[top].pendingKey = try readKey(into: stack[top].members)
                        break
                    }
                    guard peek() == UInt8(ascii: "}") else { throw error("expected ',' or '}'") }
                    position += 1
                    value = .object(stack.removeLast().members)
                } else {
                    stack[top].elements.append(value)
                    if peek() == UInt8(ascii: ",") {
                        position += 1
                        skipWhitespace()
                        break
                    }
                    guard peek() == UInt8(ascii: "]") else { throw error("expected ',' or ']'") }
                    position += 1
                    value = .array(stack.removeLast().elements)
                }
            }
        }
    }

    // MARK: - Pieces

    /// The byte at the cursor, or nil at the end.
    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    /// Skips RFC 8259 whitespace: space, tab, line feed, carriage return.
    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// Reads `"key"` and the `:` after it; rejects a key already in `members`.
    private mutating func readKey(into members: JSONObject) throws(JSONParseError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected string key") }
        let keyStart = position
        let key = try readString()
        // RFC 8259 §4 leaves duplicates undefined; RFC 7515 §5.2 lets JOSE reject them. We do.
        guard members[key] == nil else {
            throw JSONReader.error("duplicate key \"\(key)\"", at: keyStart, in: bytes)
        }
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
        position += 1
        skipWhitespace()
        return key
    }

    /// Reads a string, number or literal.
    private mutating func readScalar() throws(JSONParseError) -> JSONValue {
        guard let byte = peek() else { throw error("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "\""):
            return .string(try readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try readNumber()
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        default:
            throw error("expected a value")
        }
    }

    /// Consumes exactly `literal` or throws.
    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard peek() == byte else { throw error("invalid literal, expected '\(literal)'") }
            position += 1
        }
    }

    /// Reads a number per the RFC 8259 §6 grammar.
    private mutating func readNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a digit") }
        position += 1
        if first == UInt8(ascii: "0") {
            if let next = peek(), isDigit(next) { throw error("leading zeros are not allowed") }
        } else {
            skipDigits()
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit in exponent") }
            skipDigits()
        }
        if isInteger, let value = integerValue(bytes[(negative ? start + 1 : start)..<position], negative: negative) {
            return .int(value)
        }
        let text = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw JSONReader.error("number out of range", at: start, in: bytes)
        }
        return .double(value)
    }

    /// The digits as an `Int64`, or nil on overflow. Accumulates negatively so `Int64.min` fits.
    private func integerValue(_ digits: ArraySlice<UInt8>, negative: Bool) -> Int64? {
        var value: Int64 = 0
        for digit in digits {
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (next, overflow2) = shifted.subtractingReportingOverflow(Int64(digit &- UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = next
        }
        if negative { return value }
        return value == Int64.min ? nil : -value
    }

    /// Whether `byte` is an ASCII digit.
    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Consumes ASCII digits.
    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { position += 1 }
    }

    /// Reads a string starting at its opening quote; validates UTF-8 and escapes.
    private mutating func readString() throws(JSONParseError) -> String {
        position += 1
        // Most strings are printable ASCII with no escape: made from the input's bytes at once.
        let start = position
        while position < bytes.count, case let byte = bytes[position], byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") {
            if byte == UInt8(ascii: "\"") {
                defer { position += 1 }
                return String(decoding: bytes[start..<position], as: UTF8.self)
            }
            position += 1
        }
        var output = Array(bytes[start..<position])
        while true {
            guard let byte = peek() else { throw error("unterminated string") }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: output, as: UTF8.self)
            case UInt8(ascii: "\\"):
                try readEscape(into: &output)
            case 0x00..<0x20:
                throw error("control character in string must be escaped")
            case 0x20..<0x80:
                output.append(byte)
                position += 1
            default:
                let length = try utf8SequenceLength()
                output.append(contentsOf: bytes[position..<position + length])
                position += length
            }
        }
    }

    /// Length of the well-formed UTF-8 sequence at the cursor (Unicode Table 3-7), or throws.
    private func utf8SequenceLength() throws(JSONParseError) -> Int {
        let lead = bytes[position]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw error("invalid UTF-8")
        }
        guard position + length <= bytes.count else { throw error("invalid UTF-8") }
        guard secondRange.contains(bytes[position + 1]) else { throw error("invalid UTF-8") }
        for index in (position + 2)..<(position + length) where !(0x80...0xBF).contains(bytes[index]) {
            throw error("invalid UTF-8")
        }
        return length
    }

    /// Reads one backslash escape and appends its UTF-8.
    private mutating func readEscape(into output: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = position
        position += 1
        guard let code = peek() else { throw error("unterminated string") }
        position += 1
        switch code {
        case UInt8(ascii: "\""): output.append(0x22)
        case UInt8(ascii: "\\"): output.append(0x5C)
        case UInt8(ascii: "/"): output.append(0x2F)
        case UInt8(ascii: "b"): output.append(0x08)
        case UInt8(ascii: "f"): output.append(0x0C)
        case UInt8(ascii: "n"): output.append(0x0A)
        case UInt8(ascii: "r"): output.append(0x0D)
        case UInt8(ascii: "t"): output.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHex4()
            var scalar: UInt32
            switch unit {
            case 0xD800...0xDBFF:
                // RFC 8259 §7: a high surrogate must be followed by an escaped low surrogate.
                guard peek() == UInt8(ascii: "\\"),
                      position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: "u")
                else { throw JSONReader.error("lone surrogate", at: escapeStart, in: bytes) }
                position += 2
                let low = try readHex4()
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONReader.error("lone surrogate", at: escapeStart, in: bytes)
                }
                scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
            case 0xDC00...0xDFFF:
                throw JSONReader.error("lone surrogate", at: escapeStart, in: bytes)
            default:
                scalar = unit
            }
            appendUTF8(scalar, to: &output)
        default:
            throw JSONReader.error("invalid escape", at: escapeStart, in: bytes)
        }
    }

    /// Reads four hex digits.
    private mutating func readHex4() throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let byte = peek() else { throw error("unterminated string") }
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("expected four hex digits after \\u")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// Appends the UTF-8 encoding of a scalar value (never a surrogate here).
    private func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            output.append(UInt8(scalar))
        case 0x80..<0x800:
            output.append(UInt8(0xC0 | (scalar >> 6)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            output.append(UInt8(0xE0 | (scalar >> 12)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            output.append(UInt8(0xF0 | (scalar >> 18)))
            output.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            output.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            output.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// An error at the cursor.
    private func error(_ message: String) -> JSONParseError {
        JSONReader.error(message, at: position, in: bytes)
    }

    /// An error at `offset`, with line and column counted in `bytes`.
    private static func error(_ message: String, at offset: Int, in bytes: [UInt8]) -> JSONParseError {
        var line = 1
        var lineStart = 0
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return JSONParseError(offset: offset, line: line, column: offset - lineStart + 1, message: message)
    }
}

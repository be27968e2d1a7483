/// One JSON object or array cut into the byte ranges of its members or elements, without building
/// their values: a large document (a state export of tens of megabytes) is then parsed one member
/// or element at a time with `parse(_:_:)`, so what is held at once is the bytes and one value,
/// never the whole tree (a 55 MB import peaked at 794 MB).
///
/// The cut checks only the document's shape at this level — brackets, commas, colons, strings —
/// keeping no stack (nesting is counted), so no input can exhaust the call stack; each range is
/// then parsed by `JSONParser`, which checks everything else. Errors give the line and column in
/// the whole document.
public enum JSONSlices {
    /// The range of the one value `bytes` holds, without the whitespace around it.
    public static func document(_ bytes: [UInt8]) throws(JSONParseError) -> Range<Int> {
        var start = 0
        var end = bytes.count
        while start < end && isWhitespace(bytes[start]) { start += 1 }
        while end > start && isWhitespace(bytes[end - 1]) { end -= 1 }
        guard start < end else { throw error("unexpected end of input", at: start, in: bytes) }
        return start..<end
    }

    /// The members of the object at `range`, in order: each key (unescaped) and the range of
    /// its value. A key given twice is refused, as `JSONParser` refuses it.
    public static func members(_ bytes: [UInt8], in range: Range<Int>) throws(JSONParseError) -> [(key: String, value: Range<Int>)] {
        var members: [(key: String, value: Range<Int>)] = []
        var seen = Set<String>()
        try items(bytes, in: range, open: UInt8(ascii: "{"), close: UInt8(ascii: "}")) { (position: inout Int) throws(JSONParseError) in
            guard position < range.upperBound, bytes[position] == UInt8(ascii: "\"") else {
                throw error("expected a string key", at: position, in: bytes)
            }
            let keyRange = position..<(try valueEnd(bytes, from: position, limit: range.upperBound))
            guard case .string(let key) = try parse(bytes, keyRange) else { throw error("expected a string key", at: position, in: bytes) }
            guard seen.insert(key).inserted else { throw error("duplicate key \"\(key)\"", at: position, in: bytes) }
            position = skipWhitespace(bytes, from: keyRange.upperBound, limit: range.upperBound)
            guard position < range.upperBound, bytes[position] == UInt8(ascii: ":") else { throw error("expected ':'", at: position, in: bytes) }
            position = skipWhitespace(bytes, from: position + 1, limit: range.upperBound)
            let value = position..<(try valueEnd(bytes, from: position, limit: range.upperBound))
            members.append((key, value))
            position = value.upperBound
        }
        return members
    }

    /// The ranges of the elements of the array at `range`, in order.
    public static func elements(_ bytes: [UInt8], in range: Range<Int>) throws(JSONParseError) -> [Range<Int>] {
        var elements: [Range<Int>] = []
        try items(bytes, in: range, open: UInt8(ascii: "["), close: UInt8(ascii: "]")) { (position: inout Int) throws(JSONParseError) in
            let value = position..<(try valueEnd(bytes, from: position, limit: range.upperBound))
            elements.append(value)
            position = value.upperBound
        }
        return elements
    }

    /// The value at `range`, parsed by `JSONParser`; an error's position is in the whole document.
    public static func parse(_ bytes: [UInt8], _ range: Range<Int>, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        do {
            return try JSONParser.parse(bytes[range], maxDepth: maxDepth)
        } catch {
            throw Self.error(error.message, at: range.lowerBound + error.offset, in: bytes)
        }
    }

    // MARK: - Cutting

    /// Walks the items of the container at `range` (opened by `open`, closed by `close`): `item`
    /// reads one from the position it is given (past any whitespace) and leaves the position
    /// after it; commas and the closer are checked here.
    private static func items(_ bytes: [UInt8], in range: Range<Int>, open: UInt8, close: UInt8,
                              _ item: (inout Int) throws(JSONParseError) -> Void) throws(JSONParseError) {
        let limit = range.upperBound
        guard range.lowerBound < limit, bytes[range.lowerBound] == open else {
            throw error(open == UInt8(ascii: "{") ? "expected an object" : "expected an array", at: range.lowerBound, in: bytes)
        }
        var position = skipWhitespace(bytes, from: range.lowerBound + 1, limit: limit)
        if position < limit && bytes[position] == close {
            guard position + 1 == limit else { throw error("unexpected data after the value", at: position + 1, in: bytes) }
            return
        }
        while true {
            try item(&position)
            position = skipWhitespace(bytes, from: position, limit: limit)
            guard position < limit else { throw error("unexpected end of input", at: position, in: bytes) }
            if bytes[position] == close {
                guard position + 1 == limit else { throw error("unexpected data after the value", at: position + 1, in: bytes) }
                return
            }
            guard bytes[position] == UInt8(ascii: ",") else {
                throw error("expected ',' or '\(Character(Unicode.Scalar(close)))'", at: position, in: bytes)
            }
            position = skipWhitespace(bytes, from: position + 1, limit: limit)
        }
    }

    /// Where the value starting at `start` ends: past a string's closing quote, past the bracket
    /// that closes a container (strings inside skipped, nesting counted), or at the first byte
    /// that cannot continue a scalar. Nothing is checked that `JSONParser` checks later.
    private static func valueEnd(_ bytes: [UInt8], from start: Int, limit: Int) throws(JSONParseError) -> Int {
        guard start < limit else { throw error("unexpected end of input", at: start, in: bytes) }
        var position = start
        var depth = 0
        repeat {
            switch bytes[position] {
            case UInt8(ascii: "\""):
                position += 1
                while true {
                    guard position < limit else { throw error("unterminated string", at: position, in: bytes) }
                    let byte = bytes[position]
                    position += byte == UInt8(ascii: "\\") ? 2 : 1
                    if byte == UInt8(ascii: "\"") { break }
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                position += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { throw error("unexpected '\(Character(Unicode.Scalar(bytes[position])))'", at: position, in: bytes) }
                depth -= 1
                position += 1
            default:
                if depth == 0 {
                    // A scalar: up to the first byte that ends one.
                    while position < limit && !isWhitespace(bytes[position]) && !",]}:".utf8.contains(bytes[position]) { position += 1 }
                    guard position > start else { throw error("expected a value", at: start, in: bytes) }
                    return position
                }
                position += 1
            }
        } while depth > 0 && position < limit
        guard depth == 0, position <= limit else { throw error("unexpected end of input", at: limit, in: bytes) }
        return position
    }

    private static func skipWhitespace(_ bytes: [UInt8], from start: Int, limit: Int) -> Int {
        var position = start
        while position < limit && isWhitespace(bytes[position]) { position += 1 }
        return position
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    /// An error at `offset` of the whole document, with its line and column.
    private static func error(_ message: String, at offset: Int, in bytes: [UInt8]) -> JSONParseError {
        var line = 1
        var lineStart = 0
        for index in 0..<min(max(0, offset), bytes.count) where bytes[index] == 0x0A {
            line += 1
            lineStart = index + 1
        }
        return JSONParseError(offset: offset, line: line, column: offset - lineStart + 1, message: message)
    }
}

/// HTML built in one pass into UTF-8 bytes: markup is appended only from string literals
/// (`StaticString`), and everything else goes through `text`, which escapes it. A value that
/// comes from a user, a scenario or a request therefore cannot reach the page unescaped.
///
/// Escaping works on bytes, not on `Character`s: a quote followed by a combining mark is one
/// grapheme in Swift but still ends an attribute value in a browser, so a character-by-character
/// comparison would let it through.
struct HTMLBuffer {
    /// The page so far.
    private(set) var bytes: [UInt8] = []

    /// An empty buffer with room for `capacity` bytes.
    init(capacity: Int = 4096) {
        bytes.reserveCapacity(capacity)
    }

    /// Appends markup as written.
    mutating func raw(_ markup: StaticString) {
        markup.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `value` escaped for element content and quoted attribute values.
    mutating func text(_ value: String) {
        var value = value
        value.withUTF8 { Self.escape($0, into: &bytes) }
    }

    /// Appends UTF-8 bytes (JSON, say) escaped as `text` escapes them.
    mutating func text(bytes value: [UInt8]) {
        value.withUnsafeBufferPointer { Self.escape($0, into: &bytes) }
    }

    /// Appends UTF-8 bytes for an attribute value in single quotes (`data-body='…'`): as `text`,
    /// but `"` left as it is, which cannot end such a value (JSON stays readable and half the size).
    mutating func singleQuoted(bytes value: [UInt8]) {
        value.withUnsafeBufferPointer { Self.escape($0, into: &bytes, keepingDoubleQuotes: true) }
    }

    /// Appends a number in decimal.
    mutating func number(_ value: some BinaryInteger) {
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Appends another buffer's bytes (already built, so already escaped).
    mutating func append(_ other: HTMLBuffer) {
        bytes.append(contentsOf: other.bytes)
    }

    /// Escapes `&`, `<`, `>`, `'`, line breaks and (unless `keepingDoubleQuotes`) `"`; copies runs
    /// of other bytes at once.
    static func escape(_ source: UnsafeBufferPointer<UInt8>, into output: inout [UInt8], keepingDoubleQuotes: Bool = false) {
        var start = 0
        for index in 0..<source.count {
            let replacement: StaticString
            switch source[index] {
            case UInt8(ascii: "&"): replacement = "&amp;"
            case UInt8(ascii: "<"): replacement = "&lt;"
            case UInt8(ascii: ">"): replacement = "&gt;"
            case UInt8(ascii: "\"") where !keepingDoubleQuotes: replacement = "&quot;"
            case UInt8(ascii: "'"): replacement = "&#39;"
            // Line breaks read the same as references, and escaped text then holds none: a page
            // may use its own lines as structure (the dashboard does).
            case UInt8(ascii: "\n"): replacement = "&#10;"
            case UInt8(ascii: "\r"): replacement = "&#13;"
            default: continue
            }
            if index > start { output.append(contentsOf: UnsafeBufferPointer(rebasing: source[start..<index])) }
            replacement.withUTF8Buffer { output.append(contentsOf: $0) }
            start = index + 1
        }
        if start < source.count { output.append(contentsOf: UnsafeBufferPointer(rebasing: source[start...])) }
    }
}

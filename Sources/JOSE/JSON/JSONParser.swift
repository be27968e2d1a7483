/// Strict RFC 8259 JSON parser producing ordered `JSONValue`s.
///
/// Accepts exactly one value of any type with optional whitespace around it. Rejects trailing
/// commas, comments, a byte-order mark, leading zeros, non-finite numbers, lone surrogates,
/// raw control characters in strings, invalid UTF-8 and duplicate object keys (compared by
/// their UTF-8 bytes after unescaping). Nesting deeper than `maxDepth` containers is an error;
/// the parser keeps its own stack, so no input can exhaust the call stack.
public enum JSONParser {
    /// Parses `bytes` as one UTF-8 JSON document.
    public static func parse(
        _ bytes: some Collection<UInt8>,
        maxDepth: Int = 64
    ) throws(JSONParseError) -> JSONValue {
        var reader = JSONReader(bytes: Array(bytes), maxDepth: maxDepth)
        return try reader.readDocument()
    }

    /// Parses the UTF-8 bytes of `text` as one JSON document.
    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

import JOSE

extension JSONValue {
    /// A double exactly. A finite one is a JSON number: `JSONWriter` prints Swift's `description`,
    /// the shortest text that reads back to the same bits, and `JSONParser` reads it with
    /// `Double(_:)`, correctly rounded, so the bits come back (-0.0 included). JSON has no
    /// infinities or NaN: those are the strings `"infinity"`, `"-infinity"` and `"nan"`
    /// (`StoredReader.double(_:infinite:)` reads the infinities where a field may hold them).
    static func storedNumber(_ value: Double) -> JSONValue {
        if value.isFinite { return .double(value) }
        if value.isNaN { return .string("nan") }
        return .string(value < 0 ? "-infinity" : "infinity")
    }

    /// A `UInt64` exactly: a JSON integer up to `Int64.max` (which is all a counter reaches), else
    /// its decimal digits as a string, which `StoredReader.uint64(_:)` reads too.
    static func storedInteger(_ value: UInt64) -> JSONValue {
        Int64(exactly: value).map(JSONValue.int) ?? .string(String(value))
    }

    /// Bytes as unpadded base64url text.
    static func base64URL(_ bytes: [UInt8]) -> JSONValue {
        .string(Base64URL.encode(bytes))
    }

    /// `value` as a string, or null.
    static func optional(_ value: String?) -> JSONValue {
        value.map(JSONValue.string) ?? .null
    }
}

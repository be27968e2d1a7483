/// One JSON value (RFC 8259) with objects kept in insertion order.
public enum JSONValue: Sendable {
    /// The literal `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number written without fraction or exponent that fits in `Int64`.
    case int(Int64)
    /// Any other (finite) number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object whose members keep their order.
    case object(JSONObject)
}

extension JSONValue: Equatable {
    /// Structural equality; strings compare by their UTF-8 bytes (RFC 8259 §8.3), not by
    /// Unicode canonical equivalence, and objects compare as ordered member lists.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null):
            return true
        case let (.bool(a), .bool(b)):
            return a == b
        case let (.int(a), .int(b)):
            return a == b
        case let (.double(a), .double(b)):
            return a == b
        case let (.string(a), .string(b)):
            return a.utf8.elementsEqual(b.utf8)
        case let (.array(a), .array(b)):
            return a == b
        case let (.object(a), .object(b)):
            return a == b
        default:
            return false
        }
    }
}

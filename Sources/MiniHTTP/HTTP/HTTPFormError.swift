/// Why an `application/x-www-form-urlencoded` string could not be decoded.
public enum HTTPFormError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A `%` not followed by two hex digits, at this byte offset.
    case badPercentEscape(offset: Int)
    /// The decoded bytes are not UTF-8.
    case invalidUTF8

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .badPercentEscape(let offset): "malformed percent-escape at byte \(offset)"
        case .invalidUTF8: "decoded form data is not UTF-8"
        }
    }
}

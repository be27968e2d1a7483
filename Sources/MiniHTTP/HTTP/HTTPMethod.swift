/// An HTTP request method, compared case-sensitively as RFC 9110 §9.1 requires.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The method token, e.g. `"GET"`.
    public var rawValue: String
    /// Wraps a method token.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// `GET`
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD`
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `POST`
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT`
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `DELETE`
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `PATCH`
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `OPTIONS`
    public static let options = HTTPMethod(rawValue: "OPTIONS")

    /// The token itself.
    public var description: String { rawValue }
    /// Orders by token, for stable `Allow` headers.
    public static func < (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool { lhs.rawValue < rhs.rawValue }
}

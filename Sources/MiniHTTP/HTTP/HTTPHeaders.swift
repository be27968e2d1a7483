/// Ordered header fields with case-insensitive lookup; order and spelling are kept as sent.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields in order.
    public private(set) var fields: [(name: String, value: String)] = []

    /// An empty header list.
    public init() {}

    /// Headers from literal pairs, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { add(name, value) }
    }

    /// Appends a field (duplicates allowed).
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field named `name` with one field, kept at the first one's position.
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { Self.same($0.name, name) }) {
            fields[index].value = value
            var seen = false
            fields.removeAll { field in
                guard Self.same(field.name, name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name, value)
        }
    }

    /// Removes every field named `name`.
    public mutating func remove(_ name: String) {
        fields.removeAll { Self.same($0.name, name) }
    }

    /// The first value of `name`, if any.
    public subscript(name: String) -> String? {
        fields.first { Self.same($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.same($0.name, name) }.map(\.value)
    }

    /// True when a comma-separated header `name` lists `token` (case-insensitively).
    public func contains(_ name: String, token: String) -> Bool {
        values(name).contains { value in
            value.split(separator: ",").contains { $0.trimmingSpaces().lowercasedASCII() == token.lowercasedASCII() }
        }
    }

    /// Number of fields.
    public var count: Int { fields.count }

    /// Iterates fields in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Field-by-field equality, names compared case-insensitively.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count
            && zip(lhs.fields, rhs.fields).allSatisfy { same($0.name, $1.name) && $0.value == $1.value }
    }

    private static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercasedASCII() == b.lowercasedASCII()
    }
}

extension StringProtocol {
    /// ASCII-only lower-casing (header names and tokens are ASCII).
    func lowercasedASCII() -> String {
        String(decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Drops leading and trailing spaces and tabs.
    func trimmingSpaces() -> Substring {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return slice
    }
}

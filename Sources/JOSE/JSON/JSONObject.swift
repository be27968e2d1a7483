/// A JSON object: members in insertion order, keys unique by their UTF-8 bytes.
public struct JSONObject: Sendable {
    /// The members in order.
    private var members: [(key: String, value: JSONValue)]
    /// Position of each key in `members`, keyed by the key's UTF-8 bytes.
    private var positions: [[UInt8]: Int]

    /// An empty object.
    public init() {
        members = []
        positions = [:]
    }

    /// An object with these members in this order; a repeated key keeps its first position
    /// and takes the last value.
    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        for (key, value) in pairs {
            self[key] = value
        }
    }

    /// The keys in order.
    public var keys: [String] {
        members.map(\.key)
    }

    /// The number of members.
    public var count: Int {
        members.count
    }

    /// Whether the object has no members.
    public var isEmpty: Bool {
        members.isEmpty
    }

    /// The value for `key`. Setting an existing key replaces its value in place, setting a new
    /// key appends it, setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = positions[Array(key.utf8)] else { return nil }
            return members[index].value
        }
        set {
            let bytes = Array(key.utf8)
            if let newValue {
                if let index = positions[bytes] {
                    members[index].value = newValue
                } else {
                    positions[bytes] = members.count
                    members.append((key: key, value: newValue))
                }
            } else if let index = positions.removeValue(forKey: bytes) {
                members.remove(at: index)
                for later in index..<members.count {
                    positions[Array(members[later].key.utf8)] = later
                }
            }
        }
    }
}

extension JSONObject: Sequence {
    /// Iterates the members in order.
    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// The number of members, without iterating.
    public var underestimatedCount: Int {
        members.count
    }
}

extension JSONObject: Equatable {
    /// Equal when the members are equal pair by pair in the same order.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.members.count == rhs.members.count else { return false }
        for (left, right) in zip(lhs.members, rhs.members) {
            guard left.key.utf8.elementsEqual(right.key.utf8), left.value == right.value else {
                return false
            }
        }
        return true
    }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// Members in the order written; a repeated key keeps its first position and takes the
    /// last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(elements)
    }
}

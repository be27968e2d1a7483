/// A JSON object: members in insertion order, keys unique by their UTF-8 bytes.
public struct JSONObject: Sendable {
    /// The members in order.
    private var members: [(key: String, value: JSONValue)]
    /// Position of each key in `members`, keyed by the key's UTF-8 bytes: kept only once the
    /// object has more than `indexedAbove` members. Smaller objects (nearly all of them: a JWT's
    /// claims, a scenario's user) are searched in order, which allocates nothing.
    private var positions: [[UInt8]: Int]?

    /// Members past which lookups go through an index.
    private static let indexedAbove = 16

    /// An empty object.
    public init() {
        members = []
        positions = nil
    }

    /// An object with these members in this order; a repeated key keeps its first position
    /// and takes the last value.
    public init(_ pairs: [(String, JSONValue)]) {
        self.init()
        members.reserveCapacity(pairs.count)
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

    /// The position of `key` in `members`, compared byte for byte (two spellings of one
    /// character are two keys, as RFC 7515 §5.2 reads them).
    private func index(of key: String) -> Int? {
        if let positions { return positions[Array(key.utf8)] }
        return members.firstIndex { $0.key.utf8.elementsEqual(key.utf8) }
    }

    /// Builds the index once the object outgrows a search in order.
    private mutating func indexIfLarge() {
        guard positions == nil, members.count > Self.indexedAbove else { return }
        var built: [[UInt8]: Int] = [:]
        built.reserveCapacity(members.count * 2)
        for (index, member) in members.enumerated() { built[Array(member.key.utf8)] = index }
        positions = built
    }

    /// The value for `key`. Setting an existing key replaces its value in place, setting a new
    /// key appends it, setting `nil` removes the member.
    public subscript(key: String) -> JSONValue? {
        get {
            guard let index = index(of: key) else { return nil }
            return members[index].value
        }
        set {
            if let newValue {
                if let index = index(of: key) {
                    members[index].value = newValue
                } else {
                    positions?[Array(key.utf8)] = members.count
                    members.append((key: key, value: newValue))
                    indexIfLarge()
                }
            } else if let index = index(of: key) {
                members.remove(at: index)
                positions = nil
                indexIfLarge()
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

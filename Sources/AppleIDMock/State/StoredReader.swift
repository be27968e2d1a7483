import JOSE

/// Reads one JSON object of a state file field by field. Every problem is a `StoredStateError`
/// naming the field's full path and what was expected; nothing traps on input. `finish()`
/// refuses a key no field read, so a misspelt key in an edited file is not silently ignored.
struct StoredReader {
    /// The object's own path (`events[3].grant`); empty at the top of the document.
    let path: String
    /// The object being read.
    private let object: JSONObject
    /// The keys read so far.
    private var seen: Set<String> = []

    /// A reader of `value`, which must be an object.
    init(_ value: JSONValue, path: String) throws(StoredStateError) {
        guard case .object(let object) = value else { throw StoredStateError(path: Self.shown(path), message: "expected an object") }
        self.path = path
        self.object = object
    }

    // MARK: - Paths

    /// `path.key`, or `key` at the top.
    static func child(_ path: String, _ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// `path[index]`.
    static func element(_ path: String, _ index: Int) -> String { "\(path)[\(index)]" }

    /// `path`, or `$` for the whole document (an error always names a place).
    static func shown(_ path: String) -> String { path.isEmpty ? "$" : path }

    /// The path of the member `key`.
    func path(of key: String) -> String { Self.child(path, key) }

    /// An error at the member `key`.
    func error(_ key: String, _ message: String) -> StoredStateError { StoredStateError(path: path(of: key), message: message) }

    // MARK: - Members

    /// The member `key`, which must be present (null included).
    mutating func value(_ key: String) throws(StoredStateError) -> JSONValue {
        seen.insert(key)
        guard let value = object[key] else { throw error(key, "missing required key") }
        return value
    }

    /// The member `key`; nil when absent or null.
    mutating func optionalValue(_ key: String) -> JSONValue? {
        seen.insert(key)
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    /// Refuses the first key (in document order) that no field read.
    func finish() throws(StoredStateError) {
        for key in object.keys where !seen.contains(key) { throw error(key, "unknown key") }
    }

    /// A nested value decoded at its own path.
    mutating func decode<T: StoredCodable>(_ key: String, as type: T.Type = T.self) throws(StoredStateError) -> T {
        try T(stored: value(key), path: path(of: key))
    }

    /// An array of nested values, each decoded at its own path (`attempts[2]`).
    mutating func decodeArray<T: StoredCodable>(_ key: String, of type: T.Type = T.self) throws(StoredStateError) -> [T] {
        var items: [T] = []
        for (item, itemPath) in try array(key) { items.append(try T(stored: item, path: itemPath)) }
        return items
    }

    /// An array's elements with their paths.
    mutating func array(_ key: String) throws(StoredStateError) -> [(value: JSONValue, path: String)] {
        guard case .array(let items) = try value(key) else { throw error(key, "expected an array") }
        let here = path(of: key)
        return items.enumerated().map { (value: $1, path: Self.element(here, $0)) }
    }

    /// A string; `check` returns a message when the string is unacceptable.
    mutating func string(_ key: String, check: (String) -> String? = { _ in nil }) throws(StoredStateError) -> String {
        guard case .string(let string) = try value(key) else { throw error(key, "expected a string") }
        if let message = check(string) { throw error(key, message) }
        return string
    }

    /// A string, or nil when absent or null; `check` as for `string(_:check:)`.
    mutating func optionalString(_ key: String, check: (String) -> String? = { _ in nil }) throws(StoredStateError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard case .string(let string) = value else { throw error(key, "expected a string or null") }
        if let message = check(string) { throw error(key, message) }
        return string
    }

    /// An array of strings, each checked by `check`.
    mutating func strings(_ key: String, check: (String) -> String? = { _ in nil }) throws(StoredStateError) -> [String] {
        var strings: [String] = []
        for (item, itemPath) in try array(key) {
            guard case .string(let string) = item else { throw StoredStateError(path: itemPath, message: "expected a string") }
            if let message = check(string) { throw StoredStateError(path: itemPath, message: message) }
            strings.append(string)
        }
        return strings
    }

    /// An array of distinct strings, as a set.
    mutating func stringSet(_ key: String) throws(StoredStateError) -> Set<String> {
        var set = Set<String>()
        for (index, string) in try strings(key).enumerated() where !set.insert(string).inserted {
            throw StoredStateError(path: Self.element(path(of: key), index), message: "duplicate \"\(string)\"")
        }
        return set
    }

    /// `true` or `false`.
    mutating func bool(_ key: String) throws(StoredStateError) -> Bool {
        guard case .bool(let flag) = try value(key) else { throw error(key, "expected true or false") }
        return flag
    }

    /// `true` or `false`, or nil when absent or null.
    mutating func optionalBool(_ key: String) throws(StoredStateError) -> Bool? {
        guard let value = optionalValue(key) else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "expected true or false") }
        return flag
    }

    /// An integer within `range` (a `StoredRange`).
    mutating func int64(_ key: String, in range: ClosedRange<Int64>) throws(StoredStateError) -> Int64 {
        guard case .int(let number) = try value(key), range.contains(number) else { throw error(key, StoredRange.expectation(range)) }
        return number
    }

    /// An integer within `range`, or nil when absent or null.
    mutating func optionalInt64(_ key: String, in range: ClosedRange<Int64>) throws(StoredStateError) -> Int64? {
        guard let value = optionalValue(key) else { return nil }
        guard case .int(let number) = value, range.contains(number) else { throw error(key, StoredRange.expectation(range) + " or null") }
        return number
    }

    /// A number within `range` (a `StoredRange`); with `infinite`, also `"infinity"`.
    mutating func double(_ key: String, in range: ClosedRange<Double>, infinite: Bool = false) throws(StoredStateError) -> Double {
        let value = try self.value(key)
        if infinite, case .string("infinity") = value { return .infinity }
        guard let number = Self.double(value), range.contains(number) else {
            throw error(key, StoredRange.expectation(range) + (infinite ? " or \"infinity\"" : ""))
        }
        return number
    }

    /// A number within `range`, or nil when absent or null.
    mutating func optionalDouble(_ key: String, in range: ClosedRange<Double>) throws(StoredStateError) -> Double? {
        guard let value = optionalValue(key) else { return nil }
        guard let number = Self.double(value), range.contains(number) else {
            throw error(key, StoredRange.expectation(range) + " or null")
        }
        return number
    }

    /// An integer within `range`.
    mutating func int(_ key: String, in range: ClosedRange<Int>) throws(StoredStateError) -> Int {
        guard let number = Self.int(try value(key), in: range) else { throw error(key, Self.expectation(range)) }
        return number
    }

    /// An integer within `range`, or nil when absent or null.
    mutating func optionalInt(_ key: String, in range: ClosedRange<Int>) throws(StoredStateError) -> Int? {
        guard let value = optionalValue(key) else { return nil }
        guard let number = Self.int(value, in: range) else { throw error(key, Self.expectation(range) + " or null") }
        return number
    }

    /// A `UInt32` (0 to 4294967295).
    mutating func uint32(_ key: String) throws(StoredStateError) -> UInt32 {
        guard case .int(let number) = try value(key), let value = UInt32(exactly: number) else {
            throw error(key, "expected an integer from 0 to \(UInt32.max)")
        }
        return value
    }

    /// Unpadded base64url bytes, as many as `count` allows.
    mutating func bytes(_ key: String, count: ClosedRange<Int>) throws(StoredStateError) -> [UInt8] {
        let expected = count.lowerBound == count.upperBound ? "\(count.lowerBound)" : "\(count.lowerBound) to \(count.upperBound)"
        guard case .string(let text) = try value(key), let bytes = Base64URL.decode(text), count.contains(bytes.count) else {
            throw error(key, "expected \(expected) bytes as unpadded base64url")
        }
        return bytes
    }

    /// One of `options`, by name.
    mutating func choice<E>(_ key: String, _ options: KeyValuePairs<String, E>) throws(StoredStateError) -> E {
        guard case .string(let name) = try value(key), let match = options.first(where: { $0.key == name }) else {
            throw error(key, "expected " + options.map { "\"\($0.key)\"" }.joined(separator: " or "))
        }
        return match.value
    }

    /// One of `cases`, by raw value.
    mutating func choice<E: RawRepresentable>(_ key: String, _ cases: [E]) throws(StoredStateError) -> E where E.RawValue == String {
        guard case .string(let name) = try value(key), let match = cases.first(where: { $0.rawValue == name }) else {
            throw error(key, "expected " + cases.map { "\"\($0.rawValue)\"" }.joined(separator: " or "))
        }
        return match
    }

    /// One of `cases` by raw value, or nil when absent or null.
    mutating func optionalChoice<E: RawRepresentable>(_ key: String, _ cases: [E]) throws(StoredStateError) -> E? where E.RawValue == String {
        guard optionalValue(key) != nil else { return nil }
        do {
            return try choice(key, cases)
        } catch {
            throw StoredStateError(path: error.path, message: error.message + " or null")
        }
    }

    // MARK: - Values

    /// `value` as an `Int` within `range`, if it is one.
    private static func int(_ value: JSONValue, in range: ClosedRange<Int>) -> Int? {
        guard case .int(let number) = value, let exact = Int(exactly: number), range.contains(exact) else { return nil }
        return exact
    }

    /// `expected an integer from 0 to 999`, or `expected an integer of 0 or more` for a range open at the top.
    private static func expectation(_ range: ClosedRange<Int>) -> String {
        range.upperBound == Int.max ? "expected an integer of \(range.lowerBound) or more" : "expected an integer from \(range.lowerBound) to \(range.upperBound)"
    }

    /// `value` as a finite double, if it is a number a double holds exactly.
    private static func double(_ value: JSONValue) -> Double? {
        switch value {
        case .double(let number): return number.isFinite ? number : nil
        case .int(let number): return Double(exactly: number)
        default: return nil
        }
    }
}

import JOSE

/// Walks a scenario's JSON, collecting every problem with its JSON path; reading goes on after a
/// problem so one `scenario check` run lists them all.
final class ScenarioReader {
    private(set) var problems: [ScenarioError.Problem] = []

    /// Records a problem.
    func report(_ path: String, _ message: String) {
        problems.append(.init(path: path, message: message))
    }

    /// `path.key`, or `key` at the root.
    static func child(_ path: String, _ key: String) -> String { path == "$" ? key : "\(path).\(key)" }

    /// Checks `value` is an object whose keys are all `known`; unknown keys are problems.
    func object(_ value: JSONValue, at path: String, known: [String]) -> JSONObject? {
        guard case .object(let object) = value else {
            report(path, "expected an object, found \(Self.kind(value))")
            return nil
        }
        for key in object.keys where !known.contains(key) {
            report(Self.child(path, key), "unknown key (expected one of: \(known.joined(separator: ", ")))")
        }
        return object
    }

    /// A required or defaulted string; `check` returns a message when the value is unacceptable.
    func string(_ object: JSONObject, _ key: String, at path: String, default fallback: String? = nil,
                check: (String) -> String? = { _ in nil }) -> String {
        let here = Self.child(path, key)
        guard let value = object[key] else {
            if let fallback { return fallback }
            report(here, "missing required key")
            return ""
        }
        guard case .string(let string) = value else {
            report(here, "expected a string, found \(Self.kind(value))")
            return fallback ?? ""
        }
        if let message = check(string) { report(here, message) }
        return string
    }

    /// An array item that must be a string; `check` returns a message when it is unacceptable.
    func string(_ value: JSONValue, at path: String, check: (String) -> String? = { _ in nil }) -> String {
        guard case .string(let string) = value else {
            report(path, "expected a string, found \(Self.kind(value))")
            return ""
        }
        if let message = check(string) { report(path, message) }
        return string
    }

    /// A string that may be absent or null.
    func optionalString(_ object: JSONObject, _ key: String, at path: String, check: (String) -> String? = { _ in nil }) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard case .string(let string) = value else {
            report(Self.child(path, key), "expected a string or null, found \(Self.kind(value))")
            return nil
        }
        if let message = check(string) { report(Self.child(path, key), message) }
        return string
    }

    /// An integer within `range`, defaulted when absent.
    func int(_ object: JSONObject, _ key: String, at path: String, default fallback: Int, range: ClosedRange<Int>) -> Int {
        let here = Self.child(path, key)
        guard let value = object[key] else { return fallback }
        guard case .int(let number) = value, range.contains(Int(number)) else {
            report(here, "expected an integer from \(range.lowerBound) to \(range.upperBound), found \(Self.describe(value))")
            return fallback
        }
        return Int(number)
    }

    /// A boolean, defaulted when absent.
    func bool(_ object: JSONObject, _ key: String, at path: String, default fallback: Bool) -> Bool {
        guard let value = object[key] else { return fallback }
        guard case .bool(let flag) = value else {
            report(Self.child(path, key), "expected true or false, found \(Self.describe(value))")
            return fallback
        }
        return flag
    }

    /// One of an enum's raw values, defaulted when absent.
    func choice<E: RawRepresentable & CaseIterable>(_ object: JSONObject, _ key: String, at path: String, default fallback: E) -> E where E.RawValue == String {
        let allowed = E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
        guard let value = object[key] else { return fallback }
        guard case .string(let raw) = value, let parsed = E(rawValue: raw) else {
            report(Self.child(path, key), "expected \(allowed), found \(Self.describe(value))")
            return fallback
        }
        return parsed
    }

    /// An array's elements with their paths; absent gives `fallback`.
    func array(_ object: JSONObject, _ key: String, at path: String, required: Bool) -> [(JSONValue, String)] {
        let here = Self.child(path, key)
        guard let value = object[key] else {
            if required { report(here, "missing required key") }
            return []
        }
        guard case .array(let items) = value else {
            report(here, "expected an array, found \(Self.kind(value))")
            return []
        }
        return items.enumerated().map { ($1, "\(here)[\($0)]") }
    }

    /// A JSON value's kind, for messages.
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// A short rendering of a scalar, or its kind.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .int(let number): "\(number)"
        case .double(let number): "\(number)"
        case .bool(let flag): "\(flag)"
        case .string(let string): "\"\(string.prefix(40))\""
        default: kind(value)
        }
    }
}

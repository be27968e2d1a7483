extension JSONValue {
    /// The string, if this is `.string`.
    public var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    /// The integer, if this is `.int`.
    public var intValue: Int64? {
        if case let .int(value) = self { return value }
        return nil
    }

    /// The number as a `Double`, if this is `.int` or `.double`.
    public var doubleValue: Double? {
        switch self {
        case let .int(value): return Double(value)
        case let .double(value): return value
        default: return nil
        }
    }

    /// The boolean, if this is `.bool`.
    public var boolValue: Bool? {
        if case let .bool(value) = self { return value }
        return nil
    }

    /// The elements, if this is `.array`.
    public var arrayValue: [JSONValue]? {
        if case let .array(value) = self { return value }
        return nil
    }

    /// The members, if this is `.object`.
    public var objectValue: JSONObject? {
        if case let .object(value) = self { return value }
        return nil
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

import JOSE

extension MockClock: StoredCodable {
    /// `{"offset", "frozen_at" | null}`, both exact doubles (`JSONValue.storedNumber`).
    var stored: JSONValue {
        var object = JSONObject()
        object["offset"] = .storedNumber(offset)
        object["frozen_at"] = frozenAt.map(JSONValue.storedNumber) ?? .null
        return .object(object)
    }

    /// Reads `stored`: a finite offset; a frozen instant within `MockClock.representable`, as
    /// the clock itself refuses to move outside it.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let offset = try reader.double("offset")
        let frozenAt = try reader.optionalDouble("frozen_at")
        let range = Self.representable
        if let frozenAt, !(Double(range.lowerBound) <= frozenAt && frozenAt <= Double(range.upperBound)) {
            throw reader.error("frozen_at", "expected a number from \(range.lowerBound) to \(range.upperBound) or null")
        }
        try reader.finish()
        self.init(offset: offset, frozenAt: frozenAt)
    }
}

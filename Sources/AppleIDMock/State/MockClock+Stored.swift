import JOSE

extension MockClock: StoredCodable {
    /// `{"offset", "frozen_at" | null}`, both exact doubles (`JSONValue.storedNumber`).
    var stored: JSONValue {
        var object = JSONObject()
        object["offset"] = .storedNumber(offset)
        object["frozen_at"] = frozenAt.map(JSONValue.storedNumber) ?? .null
        return .object(object)
    }

    /// Reads `stored`: an offset within `StoredRange.offsets`; a frozen instant within
    /// `MockClock.representable`, as the clock itself refuses to move outside it.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let offset = try reader.double("offset", in: StoredRange.offsets)
        let range = Self.representable
        let frozenAt = try reader.optionalDouble("frozen_at", in: Double(range.lowerBound)...Double(range.upperBound))
        try reader.finish()
        self.init(offset: offset, frozenAt: frozenAt)
    }
}

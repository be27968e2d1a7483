import JOSE

extension FaultFiring: StoredCodable {
    /// `{"fault_id", "action", "target", "fired", "remaining" | null}`; a file written before the
    /// counts were kept has neither.
    var stored: JSONValue {
        var object = JSONObject()
        object["fault_id"] = .string(faultID)
        object["action"] = .string(action)
        object["target"] = .string(target)
        if let fired {
            object["fired"] = .int(Int64(fired))
            object["remaining"] = remaining.map { .int(Int64($0)) } ?? .null
        }
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(faultID: try reader.string("fault_id"), action: try reader.string("action"), target: try reader.string("target"),
                  fired: try reader.optionalInt("fired", in: 1...Int(StoredRange.counts.upperBound)),
                  remaining: try reader.optionalInt("remaining", in: 0...FaultSpec.maxTimes))
        try reader.finish()
    }
}

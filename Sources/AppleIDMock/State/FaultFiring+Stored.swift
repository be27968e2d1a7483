import JOSE

extension FaultFiring: StoredCodable {
    /// `{"fault_id", "action", "target"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["fault_id"] = .string(faultID)
        object["action"] = .string(action)
        object["target"] = .string(target)
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(faultID: try reader.string("fault_id"), action: try reader.string("action"), target: try reader.string("target"))
        try reader.finish()
    }
}

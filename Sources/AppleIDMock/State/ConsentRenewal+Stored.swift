import JOSE

extension ConsentRenewal: StoredCodable {
    /// `{"team_id", "group_id", "from", "to"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["team_id"] = .string(teamID)
        object["group_id"] = .string(groupID)
        object["from"] = .int(Int64(from))
        object["to"] = .int(Int64(to))
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(teamID: try reader.string("team_id"), groupID: try reader.string("group_id"),
                  from: try reader.uint32("from"), to: try reader.uint32("to"))
        try reader.finish()
    }
}

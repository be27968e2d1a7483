import JOSE

extension ConsentGrant: StoredCodable {
    /// `{"user_id", "team_id", "group_id", "consent_id", "scopes" (sorted), "hide_email", "relay_address" | null, "at"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["user_id"] = .string(userID)
        object["team_id"] = .string(teamID)
        object["group_id"] = .string(groupID)
        object["consent_id"] = .int(Int64(consentID))
        object["scopes"] = .array(scopes.sorted().map(JSONValue.string))
        object["hide_email"] = .bool(hideEmail)
        object["relay_address"] = .optional(relayAddress)
        object["at"] = .int(at)
        return .object(object)
    }

    /// Reads `stored`; the scopes must be distinct.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(userID: try reader.string("user_id"), teamID: try reader.string("team_id"), groupID: try reader.string("group_id"),
                  consentID: try reader.uint32("consent_id"), scopes: try reader.stringSet("scopes"), hideEmail: try reader.bool("hide_email"),
                  relayAddress: try reader.optionalString("relay_address"), at: try reader.int64("at", in: StoredRange.seconds))
        try reader.finish()
    }
}

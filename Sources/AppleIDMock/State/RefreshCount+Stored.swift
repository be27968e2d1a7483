import JOSE

extension RefreshCount: StoredCodable {
    /// `{"consent_id", "client_id", "issued_at", "day", "count"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["consent_id"] = .int(Int64(token.consentID))
        object["client_id"] = .string(token.clientID)
        object["issued_at"] = .int(token.issuedAt)
        object["day"] = .int(day)
        object["count"] = .int(Int64(count))
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let token = Token(consentID: try reader.uint32("consent_id"), clientID: try reader.string("client_id"),
                          issuedAt: try reader.int64("issued_at", in: StoredRange.seconds))
        self.init(token: token, day: try reader.int64("day", in: 0...(StoredRange.seconds.upperBound / 86_400)),
                  count: try reader.int("count", in: 1...RefreshThrottle.maxPerDay))
        try reader.finish()
    }
}

import JOSE

extension TransferRecord: StoredCodable {
    /// `{"user_id", "from_team", "to_team", "transfer_subject", "created_at"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["user_id"] = .string(userID)
        object["from_team"] = .string(fromTeam)
        object["to_team"] = .string(toTeam)
        object["transfer_subject"] = .string(transferSubject)
        object["created_at"] = .int(createdAt)
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(userID: try reader.string("user_id"), fromTeam: try reader.string("from_team"), toTeam: try reader.string("to_team"),
                  transferSubject: try reader.string("transfer_subject"), createdAt: try reader.int64("created_at", in: StoredRange.seconds))
        try reader.finish()
    }
}

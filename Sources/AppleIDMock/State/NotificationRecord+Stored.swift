import JOSE

extension NotificationRecord: StoredCodable {
    /// The outcomes, for reading their names back.
    private static let outcomes: [Outcome] = [.pending, .delivered, .failed, .noURL, .dropped, .abandoned]

    /// `{"id", "type", "user_id", "sequence", "url" | null, "unsigned" | null, "key_id" | null, "jwt" | null,
    /// "attempts": [{"at", "status" | null, "error" | null}], "outcome", "due_at", "fault" | null}`. `unsigned` is the
    /// payload to sign as its JSON text; `due_at` is `"infinity"` while an attempt is in flight.
    var stored: JSONValue {
        var object = JSONObject()
        object["id"] = .storedInteger(id)
        object["type"] = .string(type)
        object["user_id"] = .string(userID)
        object["sequence"] = .storedInteger(sequence)
        object["url"] = .optional(url)
        object["unsigned"] = unsigned.map(Self.storedPayload) ?? .null
        object["key_id"] = .optional(keyID)
        object["jwt"] = .optional(jwt)
        object["attempts"] = .array(attempts.map(\.stored))
        object["outcome"] = .string(outcome.rawValue)
        object["due_at"] = .storedNumber(dueAt)
        object["fault"] = .optional(fault)
        return .object(object)
    }

    /// Reads `stored`.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(id: UInt64(try reader.int64("id", in: StoredRange.counters)), type: try reader.string("type"), userID: try reader.string("user_id"),
                  sequence: UInt64(try reader.int64("sequence", in: StoredRange.counters)), url: try reader.optionalString("url"), unsigned: try Self.payload(&reader),
                  keyID: try reader.optionalString("key_id") { ScenarioRules.isKeyID($0) ? nil : ScenarioRules.keyIDExpectation },
                  jwt: try reader.optionalString("jwt"), attempts: try reader.decodeArray("attempts"),
                  outcome: try reader.choice("outcome", Self.outcomes), dueAt: try reader.double("due_at", in: StoredRange.instants, infinite: true),
                  fault: try reader.optionalString("fault"))
        try reader.finish()
    }

    /// The payload as its text: it is `JSONWriter` output, always UTF-8. Bytes that were not
    /// would be stored exactly as `{"base64url": …}`.
    private static func storedPayload(_ payload: [UInt8]) -> JSONValue {
        guard let text = String(validating: payload, as: UTF8.self) else { return ["base64url": .base64URL(payload)] }
        return .string(text)
    }

    /// The payload `storedPayload` wrote, or nil for null.
    private static func payload(_ reader: inout StoredReader) throws(StoredStateError) -> [UInt8]? {
        switch reader.optionalValue("unsigned") {
        case nil: return nil
        case .string(let text)?: return Array(text.utf8)
        case .object?:
            var inner = try StoredReader(try reader.value("unsigned"), path: reader.path(of: "unsigned"))
            let bytes = try inner.bytes("base64url", count: 0...Int.max)
            try inner.finish()
            return bytes
        default: throw reader.error("unsigned", "expected a string, an object {\"base64url\"} or null")
        }
    }
}

extension NotificationRecord.Attempt: StoredCodable {
    /// `{"at", "status" | null, "error" | null}`; `at` an exact double.
    var stored: JSONValue {
        var object = JSONObject()
        object["at"] = .storedNumber(at)
        object["status"] = status.map { .int(Int64($0)) } ?? .null
        object["error"] = .optional(error)
        return .object(object)
    }

    /// Reads `stored`: a status has three digits at most.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(at: try reader.double("at", in: StoredRange.instants), status: try reader.optionalInt("status", in: 0...999), error: try reader.optionalString("error"))
        try reader.finish()
    }
}

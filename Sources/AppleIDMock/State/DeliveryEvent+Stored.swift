import JOSE

extension DeliveryEvent: StoredCodable {
    /// `{"type", …}`: `notification-attempted` `{"id", "attempt", "jwt" | null, "outcome", "due_at" | null}`,
    /// `notifications-cleared` `{"through", "cancel_pending"}`,
    /// `notification-imported` `{"record"}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["type"] = .string(name)
        switch self {
        case .attempted(let id, let attempt, let jwt, let outcome, let dueAt):
            object["id"] = .storedInteger(id)
            object["attempt"] = attempt.stored
            object["jwt"] = .optional(jwt)
            object["outcome"] = .string(outcome.rawValue)
            object["due_at"] = dueAt.map(JSONValue.storedNumber) ?? .null
        case .cleared(let through, let cancelPending):
            object["through"] = .storedInteger(through)
            object["cancel_pending"] = .bool(cancelPending)
        case .imported(let record):
            object["record"] = record.stored
        }
        return .object(object)
    }

    /// Reads `stored`; every number within what the mock writes (`StoredRange`).
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let type = try reader.string("type")
        switch DomainEvent.Kind(rawValue: type) {
        case .notificationAttempted?:
            self = .attempted(id: UInt64(try reader.int64("id", in: StoredRange.counters)), attempt: try reader.decode("attempt"),
                              jwt: try reader.optionalString("jwt"), outcome: try reader.choice("outcome", NotificationRecord.Outcome.allCases),
                              dueAt: try reader.optionalDouble("due_at", in: StoredRange.instants))
        case .notificationsCleared?:
            self = .cleared(through: UInt64(try reader.int64("through", in: StoredRange.counts)), cancelPending: try reader.bool("cancel_pending"))
        case .notificationImported?:
            self = .imported(try reader.decode("record"))
        default:
            throw reader.error("type", "unknown delivery event \"\(type.prefix(40))\" (expected notification-attempted, notifications-cleared "
                               + "or notification-imported)")
        }
        try reader.finish()
    }

    /// The notification id the event is about (for compaction: the newest id a clear or a
    /// forgetting reached).
    var notificationID: UInt64 {
        switch self {
        case .attempted(let id, _, _, _, _): id
        case .cleared(let through, _): through
        case .imported(let record): record.id
        }
    }
}

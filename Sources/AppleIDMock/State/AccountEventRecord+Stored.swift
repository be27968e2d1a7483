import JOSE
import MiniHTTP

extension AccountEventRecord: StoredCodable {
    /// `{"type", "user_id", "team_id", "group_id", "subject", "event_time", "at", "email" | null, "notification_id",
    /// "signing_key_id" | null, "timeline_index" | null, "notification_fault"?: {"fault_id", "action", "delay_ms"}}`.
    var stored: JSONValue {
        var object = JSONObject()
        object["type"] = .string(type.rawValue)
        object["user_id"] = .string(userID)
        object["team_id"] = .string(teamID)
        object["group_id"] = .string(groupID)
        object["subject"] = .string(subject)
        object["event_time"] = .int(eventTime)
        object["at"] = .int(at)
        object["email"] = .optional(email)
        object["notification_id"] = .string(notificationID)
        object["signing_key_id"] = .optional(signingKeyID)
        object["timeline_index"] = timelineIndex.map { .int(Int64($0)) } ?? .null
        if let fault = notificationFault {
            object["notification_fault"] = .object(["fault_id": .string(fault.faultID), "action": .string(fault.action),
                                                    "delay_ms": .int(Int64(fault.delayMilliseconds))])
        }
        return .object(object)
    }

    /// Reads `stored`: the type by its exact name (not the `account-deleted` alias scenarios accept).
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        self.init(type: try reader.choice("type", AccountEventType.allCases), userID: try reader.string("user_id"),
                  teamID: try reader.string("team_id"), groupID: try reader.string("group_id"), subject: try reader.string("subject"),
                  eventTime: try reader.int64("event_time", in: StoredRange.milliseconds), at: try reader.int64("at", in: StoredRange.seconds), email: try reader.optionalString("email"),
                  notificationID: try reader.string("notification_id"),
                  signingKeyID: try reader.optionalString("signing_key_id") { ScenarioRules.isKeyID($0) ? nil : ScenarioRules.keyIDExpectation },
                  timelineIndex: try reader.optionalInt("timeline_index", in: 0...Int(StoredRange.counts.upperBound)))
        if reader.optionalValue("notification_fault") != nil {
            var fault = try StoredReader(try reader.value("notification_fault"), path: reader.path(of: "notification_fault"))
            notificationFault = NotificationFault(faultID: try fault.string("fault_id"),
                                                  action: try fault.string("action") { FaultSpec.notificationActions.contains($0) ? nil : "expected a notification fault's action" },
                                                  delayMilliseconds: try fault.int("delay_ms", in: 0...HTTPDelivery.maximumDelayMilliseconds))
            try fault.finish()
        }
        try reader.finish()
    }
}

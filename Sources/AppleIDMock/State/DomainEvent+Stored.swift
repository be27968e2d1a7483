import JOSE

extension DomainEvent: StoredCodable {
    /// The event as a state file stores it: `type` (its `name`), then each associated value under
    /// its label in snake_case (`user_id`, `consent_id`, …); an unlabelled record under the name of
    /// what it is (`grant`, `refresh`, `added_user`, `transfer`, `account_event`, `reset`, `firing`).
    var stored: JSONValue {
        if case .delivery(let delivery) = self { return delivery.stored }
        var object = JSONObject()
        object["type"] = .string(name)
        switch self {
        case .consentGranted(let grant):
            object["grant"] = grant.stored
        case .consentRevoked(let userID, let teamID, let groupID, let consentID, let by):
            object["user_id"] = .string(userID)
            object["team_id"] = .string(teamID)
            object["group_id"] = .string(groupID)
            object["consent_id"] = .int(Int64(consentID))
            object["by"] = .string(by.rawValue)
        case .codeIssued(let code, let grant):
            object["code"] = .string(code)
            object["grant"] = grant.stored
        case .codeRedeemed(let code, let clientID, let userID, let consentID):
            object["code"] = .string(code)
            object["client_id"] = .string(clientID)
            object["user_id"] = .string(userID)
            object["consent_id"] = .int(Int64(consentID))
        case .codesExpired(let at, let count):
            object["at"] = .int(at)
            object["count"] = .int(Int64(count))
        case .tokensIssued(let grantType, let clientID, let userID, let consentID):
            object["grant_type"] = .string(grantType)
            object["client_id"] = .string(clientID)
            object["user_id"] = .optional(userID)
            object["consent_id"] = .int(Int64(consentID))
        case .refreshCounted(let count):
            object["refresh"] = count.stored
        case .keyPublished(let key, let at, let step):
            object["key"] = key.stored
            object["at"] = .int(at)
            object["step"] = step.map(JSONValue.int) ?? .null
        case .keyActivated(let kid, let at):
            object["kid"] = .string(kid)
            object["at"] = .int(at)
        case .keyRetired(let kid, let at, let step):
            object["kid"] = .string(kid)
            object["at"] = .int(at)
            object["step"] = step.map(JSONValue.int) ?? .null
        case .keyScheduleAdvanced(let at):
            object["at"] = .int(at)
        case .clockChanged(let clock, let now):
            object["clock"] = clock.stored
            object["now"] = .int(now)
        case .userAdded(let added):
            object["added_user"] = added.stored
        case .transferStarted(let record):
            object["transfer"] = record.stored
        case .accountDeleted(let userID):
            object["user_id"] = .string(userID)
        case .relayForwardingChanged(let userID, let teamID, let enabled):
            object["user_id"] = .string(userID)
            object["team_id"] = .string(teamID)
            object["enabled"] = .bool(enabled)
        case .passwordChanged(let userID, let renewals):
            object["user_id"] = .string(userID)
            object["renewals"] = .array(renewals.map(\.stored))
        case .accountEvent(let record):
            object["account_event"] = record.stored
        case .timelineEventRefused(let index, let message):
            object["index"] = .int(Int64(index))
            object["message"] = .string(message)
        case .reset(let record):
            object["reset"] = record.stored
        case .faultFired(let firing):
            object["firing"] = firing.stored
        case .faultsInstalled(let faults):
            object["faults"] = .array(faults.map(\.stored))
        case .faultsRemoved(let ids):
            object["ids"] = .array(ids.map(JSONValue.string))
        case .delivery:
            break
        }
        return .object(object)
    }

    /// Reads `stored`; an unknown `type` is refused with the names it could be.
    init(stored: JSONValue, path: String) throws(StoredStateError) {
        var reader = try StoredReader(stored, path: path)
        let type = try reader.string("type")
        let kid: (String) -> String? = { ScenarioRules.isKeyID($0) ? nil : ScenarioRules.keyIDExpectation }
        guard let kind = Kind(rawValue: type) else {
            throw reader.error("type", "unknown event type \"\(type)\" (expected one of: \(Self.names.joined(separator: ", ")))")
        }
        switch kind {
        case .consentGranted:
            self = .consentGranted(try reader.decode("grant"))
        case .consentRevoked:
            self = .consentRevoked(userID: try reader.string("user_id"), teamID: try reader.string("team_id"), groupID: try reader.string("group_id"),
                                   consentID: try reader.uint32("consent_id"),
                                   by: try reader.choice("by", [Consent.Revocation.byApp, .byUser]))
        case .codeIssued:
            self = .codeIssued(code: try reader.string("code"), grant: try reader.decode("grant"))
        case .codeRedeemed:
            self = .codeRedeemed(code: try reader.string("code"), clientID: try reader.string("client_id"), userID: try reader.string("user_id"),
                                 consentID: try reader.uint32("consent_id"))
        case .codesExpired:
            self = .codesExpired(at: try reader.int64("at", in: StoredRange.seconds), count: try reader.int("count", in: 0...Int(StoredRange.counts.upperBound)))
        case .tokensIssued:
            self = .tokensIssued(grantType: try reader.string("grant_type"), clientID: try reader.string("client_id"),
                                 userID: try reader.optionalString("user_id"), consentID: try reader.uint32("consent_id"))
        case .refreshCounted:
            self = .refreshCounted(try reader.decode("refresh"))
        case .keyPublished:
            self = .keyPublished(key: try reader.decode("key"), at: try reader.int64("at", in: StoredRange.seconds), step: try reader.optionalInt64("step", in: StoredRange.counts))
        case .keyActivated:
            self = .keyActivated(kid: try reader.string("kid", check: kid), at: try reader.int64("at", in: StoredRange.seconds))
        case .keyRetired:
            self = .keyRetired(kid: try reader.string("kid", check: kid), at: try reader.int64("at", in: StoredRange.seconds), step: try reader.optionalInt64("step", in: StoredRange.counts))
        case .keyScheduleAdvanced:
            self = .keyScheduleAdvanced(at: try reader.int64("at", in: StoredRange.seconds))
        case .clockChanged:
            self = .clockChanged(clock: try reader.decode("clock"), now: try reader.int64("now", in: StoredRange.seconds))
        case .userAdded:
            self = .userAdded(try reader.decode("added_user"))
        case .transferStarted:
            self = .transferStarted(try reader.decode("transfer"))
        case .accountDeleted:
            self = .accountDeleted(userID: try reader.string("user_id"))
        case .relayForwardingChanged:
            self = .relayForwardingChanged(userID: try reader.string("user_id"), teamID: try reader.string("team_id"), enabled: try reader.bool("enabled"))
        case .passwordChanged:
            self = .passwordChanged(userID: try reader.string("user_id"), renewals: try reader.decodeArray("renewals"))
        case .accountEvent:
            self = .accountEvent(try reader.decode("account_event"))
        case .timelineEventRefused:
            self = .timelineEventRefused(index: try reader.int("index", in: 0...Int(StoredRange.counts.upperBound)), message: try reader.string("message"))
        case .reset:
            self = .reset(try reader.decode("reset"))
        case .faultFired:
            self = .faultFired(try reader.decode("firing"))
        case .faultsInstalled:
            self = .faultsInstalled(try reader.decodeArray("faults"))
        case .faultsRemoved:
            self = .faultsRemoved(ids: try reader.strings("ids"))
        case .notificationAttempted, .notificationsCleared, .notificationImported:
            // A delivery event reads itself, its own keys checked.
            self = .delivery(try DeliveryEvent(stored: stored, path: path))
            return
        }
        try reader.finish()
    }
}

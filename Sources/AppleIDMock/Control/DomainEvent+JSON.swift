import JOSE

extension RecordedEvent {
    /// The event as the feed shows it: `sequence`, mock `time` (RFC 3339 with milliseconds) and
    /// `at` (seconds), `type`, and the event's fields. Secrets the mock holds for itself (the MAC
    /// secret, private keys) are not shown; codes are, so a test can follow its own.
    var json: JSONObject {
        var object = JSONObject()
        object["sequence"] = .int(Int64(clamping: sequence))
        let seconds = Int64(seconds: at)
        let milliseconds = Int64(seconds: (at - Double(seconds)) * 1000)
        var time = RFC3339.format(seconds)
        time.removeLast()
        time += "." + String(String(1000 + max(0, min(999, milliseconds))).dropFirst()) + "Z"
        object["time"] = .string(time)
        object["at"] = .int(seconds)
        object["type"] = .string(event.name)
        for (name, value) in event.fields { object[name] = value }
        return object
    }
}

extension DomainEvent {
    /// The event's own fields, for the feed.
    var fields: [(String, JSONValue)] {
        switch self {
        case .consentGranted(let grant):
            return [("user", .string(grant.userID)), ("team_id", .string(grant.teamID)), ("group_id", .string(grant.groupID)),
                    ("consent_id", .int(Int64(grant.consentID))), ("scopes", .array(grant.scopes.sorted().map(JSONValue.string))),
                    ("hide_email", .bool(grant.hideEmail)), ("relay_email", grant.relayAddress.map(JSONValue.string) ?? .null)]
        case .consentRevoked(let userID, let teamID, let groupID, let consentID, let who):
            return [("user", .string(userID)), ("team_id", .string(teamID)), ("group_id", .string(groupID)),
                    ("consent_id", .int(Int64(consentID))), ("by", .string(who.rawValue))]
        case .codeIssued(let code, let grant):
            return [("code", .string(code)), ("client_id", .string(grant.clientID)), ("user", .string(grant.userID)),
                    ("consent_id", .int(Int64(grant.consentID))), ("flow", .string(grant.flow == .web ? "web" : "native")),
                    ("redirect_uri", grant.redirectURI.map(JSONValue.string) ?? .null), ("nonce", grant.nonce.map(JSONValue.string) ?? .null),
                    ("code_challenge_method", grant.codeChallengeMethod.map(JSONValue.string) ?? .null),
                    ("expires_at", .int(grant.expiresAt)), ("first_authorization", .bool(grant.isFirstAuthorization))]
        case .codeRedeemed(let code, let clientID, let userID, let consentID):
            return [("code", .string(code)), ("client_id", .string(clientID)), ("user", .string(userID)), ("consent_id", .int(Int64(consentID)))]
        case .codesExpired(let at, let count):
            return [("before", .int(at)), ("count", .int(Int64(count)))]
        case .tokensIssued(let grantType, let clientID, let userID, let consentID):
            return [("grant_type", .string(grantType)), ("client_id", .string(clientID)), ("user", userID.map(JSONValue.string) ?? .null),
                    ("consent_id", .int(Int64(consentID)))]
        case .refreshCounted(let counted):
            return [("client_id", .string(counted.token.clientID)), ("consent_id", .int(Int64(counted.token.consentID))),
                    ("token_issued_at", .int(counted.token.issuedAt)), ("day", .string(String(RFC3339.format(counted.day * 86_400).prefix(10)))),
                    ("count", .int(Int64(counted.count)))]
        case .keyPublished(let key, let at, let step):
            return [("kid", .string(key.keyID)), ("key_time", .int(at)), ("step", step.map(JSONValue.int) ?? .null)]
        case .keyActivated(let kid, let at):
            return [("kid", .string(kid)), ("key_time", .int(at))]
        case .keyRetired(let kid, let at, let step):
            return [("kid", .string(kid)), ("key_time", .int(at)), ("step", step.map(JSONValue.int) ?? .null)]
        case .keyScheduleAdvanced(let at):
            return [("horizon", .int(at))]
        case .clockChanged(let clock, let now):
            return [("now", .string(RFC3339.format(now))), ("frozen", .bool(clock.isFrozen))]
        case .userAdded(let added):
            return [("user", .string(added.user.id)), ("email", added.user.managed ? .null : .string(added.user.email))]
        case .transferStarted(let record):
            return [("user", .string(record.userID)), ("from_team", .string(record.fromTeam)), ("to_team", .string(record.toTeam)),
                    ("transfer_sub", .string(record.transferSubject))]
        case .accountDeleted(let userID):
            return [("user", .string(userID))]
        case .relayForwardingChanged(let userID, let teamID, let enabled):
            return [("user", .string(userID)), ("team_id", .string(teamID)), ("enabled", .bool(enabled))]
        case .passwordChanged(let userID, let renewals):
            return [("user", .string(userID)),
                    ("consents", .array(renewals.map { .object(["team_id": .string($0.teamID), "group_id": .string($0.groupID),
                                                                "consent_id": .int(Int64($0.to)), "ended_consent_id": .int(Int64($0.from))]) }))]
        case .accountEvent(let record):
            return [("event", .string(record.type.rawValue)), ("user", .string(record.userID)), ("team_id", .string(record.teamID)),
                    ("group_id", .string(record.groupID)), ("sub", .string(record.subject)), ("event_time", .int(record.eventTime)),
                    ("email", record.email.map(JSONValue.string) ?? .null), ("jti", .string(record.notificationID)),
                    ("timeline_index", record.timelineIndex.map { .int(Int64($0)) } ?? .null)]
        case .timelineEventRefused(let index, let message):
            return [("timeline_index", .int(Int64(index))), ("message", .string(message))]
        case .reset(let record):
            return [("now", .string(RFC3339.format(record.now))), ("frozen", .bool(record.clock.isFrozen))]
        case .faultFired(let firing):
            return [("fault", .string(firing.faultID)), ("action", .string(firing.action)), ("target", .string(firing.target))]
        case .faultsInstalled(let faults):
            return [("faults", .array(faults.map { .object($0.json) }))]
        case .faultsRemoved(let ids):
            return [("faults", .array(ids.map(JSONValue.string)))]
        case .delivery(.attempted(let id, let attempt, _, let outcome, _)):
            // `outcome` after the attempt: delivered, failed (given up), or pending (a retry is
            // due; or the mock stopped with it on the wire, and delivery resumes after a restart).
            return [("notification", .int(Int64(clamping: id))), ("status", attempt.status.map { .int(Int64($0)) } ?? .null),
                    ("error", attempt.error.map(JSONValue.string) ?? .null), ("outcome", .string(outcome.rawValue))]
        case .delivery(.cleared(let through, let cancelPending)):
            return [("through", .int(Int64(clamping: through))), ("cancel_pending", .bool(cancelPending))]
        case .delivery(.imported(let record)):
            return [("notification", .int(Int64(clamping: record.id))), ("outcome", .string(record.outcome.rawValue))]
        }
    }
}

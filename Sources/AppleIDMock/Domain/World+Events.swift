import JOSE

/// An account event a user causes at Apple (apple-reference.md §7).
public enum AccountEventType: String, Sendable, Equatable, CaseIterable {
    /// The user stopped using Sign in with Apple for the app.
    case consentRevoked = "consent-revoked"
    /// The user deleted their Apple Account (sent as the scenario's `account_deletion_event_type`).
    case accountDelete = "account-delete"
    /// The user turned off mail forwarding of their relay address.
    case emailDisabled = "email-disabled"
    /// The user turned it back on.
    case emailEnabled = "email-enabled"

    /// The names accepted, for messages.
    static let names = "\"consent-revoked\", \"account-delete\", \"account-deleted\", \"email-disabled\" or \"email-enabled\""

    /// The type named `text`; both spellings of deletion are accepted.
    public init?(name text: String) {
        if text == "account-deleted" { self = .accountDelete } else { self.init(rawValue: text) }
    }
}

/// Why an event could not happen: 400/404/409 with the field at fault.
public struct AccountEventError: Error, Equatable, Sendable {
    /// HTTP status: 404 unknown user or client, 409 not possible in the current state.
    public var status: Int
    /// What is wrong.
    public var message: String
    /// The field at fault.
    public var field: String
}

/// A server-to-server notification decided inside an operation, signed and sent later. It
/// keeps the JWT payload as bytes (one allocation): outbox and delivery log hold thousands.
public struct PendingNotification: Sendable, Equatable {
    /// The JWT payload as it will be signed: the compact JSON of the claims (`iss`, `aud`, `iat`,
    /// `exp`, `jti`, `events`).
    public let payload: [UInt8]
    /// The event's `type`.
    public let type: String
    /// The app group's primary App ID (the `aud`).
    public let groupID: String
    /// Where it goes; nil when the app group registered no URL.
    public let url: String?
    /// The user it is about.
    public let userID: String
    /// Its number among every notification the mock queued (1, 2, 3, … across resets): the
    /// operation that queued it knows it, so it can find its own record in the delivery log
    /// (probe finding N3).
    public let sequence: UInt64

    /// The claims, read back from the payload.
    public var claims: JSONObject { Self.claims(payload) }

    /// The claims of a compact JSON payload (empty for anything else).
    static func claims(_ payload: [UInt8]) -> JSONObject {
        guard case .object(let claims)? = try? JSONParser.parse(payload) else { return JSONObject() }
        return claims
    }

    /// The event object of `claims`, whether `events` carries it as a JSON string (Apple's
    /// payloads) or as an object (Apple's examples).
    static func event(_ claims: JSONObject) -> JSONObject {
        switch claims["events"] {
        case .object(let event)?: return event
        case .string(let text)?:
            guard case .object(let event)? = try? JSONParser.parse(Array(text.utf8)) else { return JSONObject() }
            return event
        default: return JSONObject()
        }
    }
}

extension World {
    /// Most notifications waiting in the outbox; beyond it they are recorded as dropped, never lost silently.
    static let outboxCapacity = 10_000

    /// Applies an account event as Apple does (§7) and queues its notification.
    ///
    /// - `consent-revoked`: the app group's consent ends, its tokens die, the next sign-in is a first one.
    /// - account deletion: the account can no longer sign in anywhere, every consent of the user in
    ///   the team ends, relay forwarding stops for the team's apps.
    /// - `email-disabled` / `email-enabled`: relay forwarding off / on, for a user who hid their
    ///   email from this app group.
    mutating func accountEvent(_ type: AccountEventType, userID: String, entry: ClientDirectory.Entry, now: Int64) throws(AccountEventError) {
        guard var account = users[userID] else { throw AccountEventError(status: 404, message: "no user \"\(userID)\"", field: "user") }
        guard !account.deleted else { throw AccountEventError(status: 409, message: "the Apple Account of \"\(userID)\" was deleted", field: "user") }
        let teamID = entry.team.teamID
        let key = Consent.Key(teamID: teamID, groupID: entry.groupID, userID: userID)
        var event = JSONObject()
        let compatibility = context.scenario.compatibility
        event["type"] = .string(type == .accountDelete ? compatibility.accountDeletionEventType : type.rawValue)
        event["sub"] = .string(Identity.subject(teamID: teamID, userID: userID))
        event["event_time"] = .int(compatibility.eventTimeUnit == .milliseconds ? eventMilliseconds(now) : now)
        switch type {
        case .consentRevoked:
            guard let consent = consents[key] else {
                throw AccountEventError(status: 409, message: "\"\(userID)\" has not signed in to this app group", field: "user")
            }
            endConsent(id: consent.id, by: .byUser)
        case .accountDelete:
            account.deleted = true
            account.relayDisabledTeams.insert(teamID)
            users[userID] = account
            endConsents(userID: userID, teamID: teamID, by: .byUser)
            emit(.accountDeleted(userID: userID, teamID: teamID))
        case .emailDisabled, .emailEnabled:
            guard consents[key]?.hideEmail == true else {
                throw AccountEventError(status: 409, message: "\"\(userID)\" does not use a relay address with this app group", field: "user")
            }
            if type == .emailDisabled { account.relayDisabledTeams.insert(teamID) } else { account.relayDisabledTeams.remove(teamID) }
            users[userID] = account
            emit(.relayForwardingChanged(userID: userID, teamID: teamID, enabled: type == .emailEnabled))
            event["email"] = .string(Identity.relayAddress(teamID: teamID, userID: userID))
            // §7 [D]: "is_private_email" is the string "true" in these events.
            event["is_private_email"] = "true"
        }
        queueNotification(event: event, entry: entry, userID: userID, now: now)
    }

    /// `now` in milliseconds, with the fraction of the operation's start when it is the same second.
    func eventMilliseconds(_ now: Int64) -> Int64 {
        Int64(preciseNow.rounded(.down)) == now ? Int64((preciseNow * 1000).rounded(.down)) : now * 1000
    }

    /// Puts the notification of `event` for `entry`'s app group in the outbox (§7).
    mutating func queueNotification(event: JSONObject, entry: ClientDirectory.Entry, userID: String, now: Int64) {
        var claims = JSONObject()
        claims["iss"] = .string(context.issuer)
        claims["aud"] = .string(entry.groupID)
        claims["iat"] = .int(now)
        // One real token had exp = iat + 24 h (§7 [O]).
        claims["exp"] = .int(now + 86_400)
        claims["jti"] = .string(context.random.hex(32))
        claims["events"] = context.scenario.compatibility.eventsClaimFormat == .string
            ? .string(String(decoding: JSONWriter.compact(.object(event)), as: UTF8.self)) : .object(event)
        notificationSequence += 1
        let notification = PendingNotification(payload: JSONWriter.compact(.object(claims)), type: event["type"]?.stringValue ?? "",
                                               groupID: entry.groupID,
                                               url: context.scenario.notificationURL(group: entry.groupID, team: entry.team), userID: userID,
                                               sequence: notificationSequence)
        if outbox.count >= Self.outboxCapacity {
            // Reported in the delivery log as dropped; beyond 1,000 only counted.
            if droppedNotifications.count < 1000 { droppedNotifications.append(notification) } else { droppedUncounted += 1 }
        } else {
            outbox.append(notification)
        }
    }
}

extension World {
    /// Fires the scenario's timeline events whose `at` (seconds after start) the clock has passed,
    /// in order; a refused one is reported as an event and skipped.
    mutating func fireTimeline(now: Int64) {
        let timeline = context.scenario.events
        while nextTimelineEvent < timeline.count {
            let scheduled = timeline[nextTimelineEvent]
            guard start + Int64(scheduled.at) <= now else { return }
            nextTimelineEvent += 1
            guard let type = AccountEventType(name: scheduled.type), let entry = context.clients.entry(scheduled.clientID) else { continue }
            let userID = resolveUser(scheduled.user)?.userID ?? scheduled.user
            do {
                try accountEvent(type, userID: userID, entry: entry, now: now)
            } catch {
                emit(.timelineEventRefused(index: nextTimelineEvent - 1, message: error.message))
            }
        }
    }
}

import JOSE

extension World {
    /// Applies an account event as Apple does (§7): decides its state changes and the account
    /// events Apple tells app groups about (their notifications follow from those).
    ///
    /// - `consent-revoked`: the app group's consent ends, its tokens die, the next sign-in is a first one.
    /// - account deletion: the account can no longer sign in anywhere; every consent of the user,
    ///   in every team, ends; relay forwarding stops; every app group the user had signed in to
    ///   is told (the named one first), not only the named one.
    /// - `email-disabled` / `email-enabled`: relay forwarding off / on, for a user who hid their
    ///   email from this app group.
    func accountEvent(_ type: AccountEventType, userID: String, entry: ClientDirectory.Entry, now: Int64, timelineIndex: Int? = nil,
                      _ changes: inout WorldChanges) throws(AccountEventError) {
        guard let account = users[userID] else { throw AccountEventError(.unknown, message: "no user \"\(userID)\"", field: "user") }
        guard !account.deleted else { throw AccountEventError(.notPossible, message: "the Apple Account of \"\(userID)\" was deleted", field: "user") }
        let teamID = entry.team.teamID
        let key = Consent.Key(teamID: teamID, groupID: entry.groupID, userID: userID)
        switch type {
        case .consentRevoked:
            guard let consent = consents[key], let ending = consentEnding(id: consent.id, by: .byUser) else {
                throw AccountEventError(.notPossible, message: "\"\(userID)\" has not signed in to this app group", field: "user")
            }
            changes.emit(ending)
            changes.emit(.accountEvent(accountEventRecord(type, key: key, now: now, timelineIndex: timelineIndex, changes: &changes)))
        case .accountDelete:
            var told = [key]
            for other in (consentKeysOfUser[userID] ?? []).filter({ $0 != key })
                .sorted(by: { ($0.teamID, $0.groupID) < ($1.teamID, $1.groupID) }) {
                told.append(other)
            }
            for ending in consentEndings(userID: userID, by: .byUser) { changes.emit(ending) }
            changes.emit(.accountDeleted(userID: userID))
            for group in told {
                changes.emit(.accountEvent(accountEventRecord(type, key: group, now: now, timelineIndex: timelineIndex, changes: &changes)))
            }
        case .emailDisabled, .emailEnabled:
            guard consents[key]?.hideEmail == true else {
                throw AccountEventError(.notPossible, message: "\"\(userID)\" does not use a relay address with this app group", field: "user")
            }
            changes.emit(.relayForwardingChanged(userID: userID, teamID: teamID, enabled: type == .emailEnabled))
            var record = accountEventRecord(type, key: key, now: now, timelineIndex: timelineIndex, changes: &changes)
            record.email = relayAddress(teamID: teamID, userID: userID)
            changes.emit(.accountEvent(record))
        }
    }

    /// The user changed their Apple Account password (§9 [D]): Apple may end the refresh tokens of
    /// every app, and tells no app. Each live consent moves to a new id, so its tokens die and a
    /// new sign-in is a returning one; no notification, and the credential state stays
    /// `authorized` (undocumented [U]).
    func passwordChanged(userID: String, _ changes: inout WorldChanges) throws(AccountEventError) {
        guard let account = users[userID] else { throw AccountEventError(.unknown, message: "no user \"\(userID)\"", field: "user") }
        guard !account.deleted else { throw AccountEventError(.notPossible, message: "the Apple Account of \"\(userID)\" was deleted", field: "user") }
        var next = nextConsentID
        let renewals = (consentKeysOfUser[userID] ?? []).sorted { ($0.teamID, $0.groupID) < ($1.teamID, $1.groupID) }
            .compactMap { key -> ConsentRenewal? in
                guard let consent = consents[key] else { return nil }
                let renewal = ConsentRenewal(teamID: key.teamID, groupID: key.groupID, from: consent.id, to: next)
                next = next &+ 1
                if next == 0 { next = 1 }
                return renewal
            }
        changes.emit(.passwordChanged(userID: userID, renewals: renewals))
    }

    /// The account event Apple tells `key`'s app group about, with its notification id drawn now.
    func accountEventRecord(_ type: AccountEventType, key: Consent.Key, now: Int64, timelineIndex: Int? = nil,
                            changes: inout WorldChanges) -> AccountEventRecord {
        let milliseconds = context.scenario.compatibility.eventTimeUnit == .milliseconds
        // A fault on its notification is decided with the event, so the delivery log follows from the record.
        let fault = notificationFault(type: type, groupID: key.groupID, teamID: key.teamID, now: now, &changes)
        var record = AccountEventRecord(type: type, userID: key.userID, teamID: key.teamID, groupID: key.groupID,
                                  subject: Identity.subject(teamID: key.teamID, userID: key.userID),
                                  eventTime: milliseconds ? Self.eventMilliseconds(now, precise: changes.preciseNow) : now, at: now,
                                  email: nil, notificationID: changes.random.hex(32), signingKeyID: signingKey?.keyID,
                                  timelineIndex: timelineIndex)
        record.notificationFault = fault
        return record
    }

    /// `now` in milliseconds, with the fraction of the operation's start when it is the same second.
    static func eventMilliseconds(_ now: Int64, precise: Double) -> Int64 {
        Int64(seconds: precise) == now ? Int64(seconds: precise * 1000) : now * 1000
    }

    /// The scenario's timeline event due at `now` (seconds after start), if one is: its index,
    /// and the events it decides (a refused one is reported as an event and skipped).
    func nextTimelineEvent(now: Int64, _ changes: inout WorldChanges) -> Bool {
        let timeline = context.scenario.events
        guard nextTimelineEvent < timeline.count else { return false }
        let index = nextTimelineEvent
        let scheduled = timeline[index]
        guard start + Int64(scheduled.at) <= now else { return false }
        guard let type = AccountEventType(name: scheduled.type), let entry = context.clients.entry(scheduled.clientID) else {
            changes.emit(.timelineEventRefused(index: index, message: "unknown event type or client"))
            return true
        }
        let userID = resolveUser(scheduled.user)?.userID ?? scheduled.user
        var attempt = changes
        do {
            try accountEvent(type, userID: userID, entry: entry, now: now, timelineIndex: index, &attempt)
            changes = attempt
        } catch {
            changes.emit(.timelineEventRefused(index: index, message: error.message))
        }
        return true
    }
}

extension World {
    /// Applies one event: the only code that changes a world. It reads nothing but the event
    /// and the world, so applying a run's events to the scenario's initial state gives the
    /// run's state (a replay).
    mutating func apply(_ event: DomainEvent) {
        switch event {
        case .consentGranted(let grant):
            let key = Consent.Key(teamID: grant.teamID, groupID: grant.groupID, userID: grant.userID)
            consents[key] = Consent(id: grant.consentID, scopes: grant.scopes, hideEmail: grant.hideEmail, grantedAt: grant.at)
            consentKeys[grant.consentID] = key
            consentKeysOfUser[grant.userID, default: []].insert(key)
            endedConsents[key] = nil
            nextConsentID = grant.consentID &+ 1
            if nextConsentID == 0 { nextConsentID = 1 }
        case .consentRevoked(let userID, let teamID, let groupID, let consentID, let who):
            let key = Consent.Key(teamID: teamID, groupID: groupID, userID: userID)
            consentKeys[consentID] = nil
            consents[key] = nil
            if consentKeysOfUser[userID]?.remove(key) != nil, consentKeysOfUser[userID]?.isEmpty == true { consentKeysOfUser[userID] = nil }
            revoked[consentID] = who
            endedConsents[key] = who
        case .codeIssued(let code, let grant):
            pendingCodes.insert(code, grant)
        case .codeRedeemed(let code, _, _, _):
            pendingCodes.remove(code)
        case .codesExpired(let at, _):
            pendingCodes.removeExpired(by: at)
        case .tokensIssued:
            break
        case .refreshCounted(let counted):
            refreshCounts[counted.token] = counted
        case .keyPublished(let key, let at, let step):
            keys.append(KeyRecord(key: key, publishedAt: at, activatedAt: nil))
            keysPublished &+= 1
            if let step { schedule?.keyIDs[step] = key.keyID }
            trimRetiredKeys()
        case .keyActivated(let keyID, let at):
            guard let index = keys.firstIndex(where: { $0.keyID == keyID }) else { return }
            for other in keys.indices where keys[other].state == .active { keys[other].deactivate() }
            keys[index].activate(at: at)
            activeKeyID = keyID
        case .keyRetired(let keyID, let at, let step):
            if let index = keys.firstIndex(where: { $0.keyID == keyID && $0.state != .retired }) {
                lastRetiredKey = keys[index].key ?? lastRetiredKey
                keys[index].retire(at: at)
            }
            if let step { schedule?.keyIDs[step] = nil }
        case .keyScheduleAdvanced(let at):
            schedule?.horizon = at
        case .clockChanged(let clock, _):
            self.clock = clock
        case .userAdded(let added):
            users[added.user.id] = UserAccount(user: added.user, addedAtRuntime: true)
            userOrder.append(added.user.id)
            userIndex.insert(added)
        case .transferStarted(let record):
            transfers[record.transferSubject] = record
            transfersOfUser[record.userID, default: []].insert(record.transferSubject)
        case .accountDeleted(let userID):
            users[userID]?.deleted = true
            // A deleted account forwards no relay mail, in any team.
            for team in context.scenario.teams { users[userID]?.relayDisabledTeams.insert(team.teamID) }
        case .relayForwardingChanged(let userID, let teamID, let enabled):
            if enabled { users[userID]?.relayDisabledTeams.remove(teamID) } else { users[userID]?.relayDisabledTeams.insert(teamID) }
        case .passwordChanged(let userID, let renewals):
            for renewal in renewals {
                let key = Consent.Key(teamID: renewal.teamID, groupID: renewal.groupID, userID: userID)
                guard var consent = consents[key], consent.id == renewal.from else { continue }
                consent.id = renewal.to
                consents[key] = consent
                consentKeys[renewal.from] = nil
                consentKeys[renewal.to] = key
                revoked[renewal.from] = .passwordChanged
                nextConsentID = renewal.to &+ 1
                if nextConsentID == 0 { nextConsentID = 1 }
            }
        case .accountEvent(let record):
            if let index = record.timelineIndex { nextTimelineEvent = max(nextTimelineEvent, index + 1) }
        case .timelineEventRefused(let index, _):
            nextTimelineEvent = max(nextTimelineEvent, index + 1)
        case .faultFired, .faultsInstalled, .faultsRemoved:
            applyFault(event)
        case .delivery:
            // The delivery log's, not the world's.
            break
        case .reset(let record):
            let carried = (keysRevision, keysPublished, random)
            // Faults go back to the scenario's, their stream to the seed's start (unseeded, it runs on).
            self = World(context: context, clock: record.clock, now: record.now, secret: record.secret,
                         firstConsentID: record.firstConsentID, random: carried.2, faultRandom: context.faultSeed ?? faults.random)
            keysRevision = carried.0 &+ 1
            keysPublished = carried.1
        }
    }

    /// Keeps the history of retired keys bounded (the newest 100).
    private mutating func trimRetiredKeys() {
        let retired = keys.indices.filter { keys[$0].state == .retired }
        guard retired.count > 100 else { return }
        let drop = Set(retired.prefix(retired.count - 100))
        keys = keys.indices.filter { !drop.contains($0) }.map { keys[$0] }
    }
}

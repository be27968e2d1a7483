extension World {
    /// Why this world could not have recorded `event` — the member of the event at fault (its
    /// stored key path, `grant.user_id`) and what is wrong — or nil when one of the mock's own
    /// operations could have. `state import` replays an archive through it before anything is
    /// written, so a person's edit cannot make a state the mock could never produce
    /// (users over the limit, two users with one `sub` or relay address, consents and codes for
    /// users, teams or consents that do not exist, keys retired or activated that are not there).
    /// It checks what the operations guarantee, not how they chose (values, times, order).
    func refusal(of event: DomainEvent) -> (field: String, message: String)? {
        switch event {
        case .consentGranted(let grant):
            if let problem = unknown(user: grant.userID, field: "grant.user_id") ?? unknown(team: grant.teamID, group: grant.groupID, field: "grant") {
                return problem
            }
            if consentKeys[grant.consentID] != nil || revoked[grant.consentID] != nil {
                return ("grant.consent_id", "consent \(grant.consentID) was granted already (consent ids are never reused)")
            }
            if let scope = grant.scopes.sorted().first(where: { $0 != "name" && $0 != "email" }) {
                return ("grant.scopes", "\"\(scope)\" is no scope Apple grants (name, email)")
            }
        case .consentRevoked(let userID, let teamID, let groupID, let consentID, _):
            guard let (key, _) = consent(id: consentID), key == Consent.Key(teamID: teamID, groupID: groupID, userID: userID) else {
                return ("consent_id", "no live consent \(consentID) of \(userID) for \(groupID) in \(teamID)")
            }
        case .codeIssued(let code, let grant):
            if pendingCodes[code] != nil { return ("code", "the code is pending already") }
            if pendingCodes.count >= context.codeCapacity {
                return ("code", "\(context.codeCapacity) codes are pending already, the most the mock holds")
            }
            guard let entry = context.clients.entry(grant.clientID), entry.team.teamID == grant.teamID else {
                return ("grant.client_id", "no client \"\(grant.clientID)\" in team \(grant.teamID) of the scenario")
            }
            guard let (key, _) = consent(id: grant.consentID), key == Consent.Key(teamID: grant.teamID, groupID: entry.groupID, userID: grant.userID) else {
                return ("grant.consent_id", "no live consent \(grant.consentID) of \(grant.userID) for \(entry.groupID)")
            }
            if grant.expiresAt < grant.authTime { return ("grant.expires_at", "before auth_time \(grant.authTime)") }
        case .codeRedeemed(let code, let clientID, let userID, let consentID):
            guard let grant = pendingCodes[code] else { return ("code", "no pending code with this value") }
            if grant.clientID != clientID || grant.userID != userID || grant.consentID != consentID {
                return ("code", "the pending code was issued to \(grant.clientID) for \(grant.userID) under consent \(grant.consentID)")
            }
        case .tokensIssued(_, let clientID, _, _):
            if context.clients.entry(clientID) == nil { return ("client_id", "no client \"\(clientID)\" in the scenario") }
        case .refreshCounted(let counted):
            if context.clients.entry(counted.token.clientID) == nil {
                return ("refresh.client_id", "no client \"\(counted.token.clientID)\" in the scenario")
            }
            if let last = refreshCounts[counted.token] {
                let (day, count) = (last.day, last.count)
                if counted.day < day { return ("refresh.day", "day \(counted.day) is before day \(day), already counted") }
                if counted.day == day && counted.count != count + 1 { return ("refresh.count", "expected \(count + 1), the next refresh of day \(day)") }
                if counted.day > day && counted.count != 1 { return ("refresh.count", "expected 1, the first refresh of day \(counted.day)") }
            } else if counted.count != 1 {
                return ("refresh.count", "expected 1, the token's first counted refresh")
            }
        case .keyPublished(let key, _, _):
            if keys.contains(where: { $0.keyID == key.keyID }) { return ("key.kid", "key \(key.keyID) was published already") }
        case .keyActivated(let keyID, _):
            guard let record = keys.first(where: { $0.keyID == keyID }), record.state != .retired else {
                return ("kid", "no published key \(keyID)")
            }
        case .keyRetired(let keyID, _, _):
            guard let record = keys.first(where: { $0.keyID == keyID }), record.state != .retired else {
                return ("kid", "no published key \(keyID)")
            }
            if record.state == .active { return ("kid", "key \(keyID) signs: the signing key is never retired") }
        case .userAdded(let added):
            let id = added.user.id
            if users[id] != nil { return ("added_user.user.id", "user \"\(id)\" exists already") }
            if users.count >= userCapacity { return ("added_user", "the mock holds \(users.count) users already, its limit") }
            let teams = context.scenario.teams.count
            if added.subjects.count != teams { return ("added_user.subjects", "expected \(teams), one per team of the scenario") }
            for (index, subject) in added.subjects.enumerated() {
                if let owner = context.scenarioUserIndex.index.owner(subject: subject) ?? userIndex.owner(subject: subject) {
                    return ("added_user.subjects[\(index)]", "the sub of user \"\(owner.userID)\" already")
                }
            }
            for (index, address) in added.relayAddresses.enumerated() {
                if let owner = context.scenarioUserIndex.index.owner(relayAddress: address) ?? userIndex.owner(relayAddress: address) {
                    return ("added_user.relay_addresses[\(index)]", "the relay address of user \"\(owner.userID)\" already")
                }
            }
        case .transferStarted(let record):
            if let problem = unknown(user: record.userID, field: "transfer.user_id") { return problem }
            if context.clients.team(record.fromTeam) == nil { return ("transfer.from_team", "no team \(record.fromTeam) in the scenario") }
            if context.clients.team(record.toTeam) == nil { return ("transfer.to_team", "no team \(record.toTeam) in the scenario") }
        case .accountDeleted(let userID):
            return unknown(user: userID, field: "user_id")
        case .relayForwardingChanged(let userID, let teamID, _):
            if let problem = unknown(user: userID, field: "user_id") { return problem }
            if context.clients.team(teamID) == nil { return ("team_id", "no team \(teamID) in the scenario") }
        case .passwordChanged(let userID, let renewals):
            if let problem = unknown(user: userID, field: "user_id") { return problem }
            var taken = Set<UInt32>()
            for (index, renewal) in renewals.enumerated() {
                guard let (key, _) = consent(id: renewal.from), key == Consent.Key(teamID: renewal.teamID, groupID: renewal.groupID, userID: userID) else {
                    return ("renewals[\(index)].from", "no live consent \(renewal.from) of \(userID) for \(renewal.groupID) in \(renewal.teamID)")
                }
                if renewal.to == 0 || consentKeys[renewal.to] != nil || revoked[renewal.to] != nil || !taken.insert(renewal.to).inserted {
                    return ("renewals[\(index)].to", "consent \(renewal.to) was granted already (consent ids are never reused)")
                }
            }
        case .accountEvent(let record):
            if let problem = unknown(user: record.userID, field: "account_event.user_id")
                ?? unknown(team: record.teamID, group: record.groupID, field: "account_event") {
                return problem
            }
            if let index = record.timelineIndex, index >= context.scenario.events.count {
                return ("account_event.timeline_index", "the scenario's timeline has \(context.scenario.events.count) events")
            }
        case .timelineEventRefused(let index, _):
            if index >= context.scenario.events.count { return ("index", "the scenario's timeline has \(context.scenario.events.count) events") }
        case .faultsInstalled(let installed):
            if faults.installed.count + installed.count > FaultSpec.maxCount {
                return ("faults", "\(FaultSpec.maxCount) faults are installed already, the most the mock holds")
            }
            for (index, fault) in installed.enumerated() where fault.number < faults.nextNumber || faults.fault(fault.id) != nil {
                return ("faults[\(index)].id", "\(fault.id) was installed already (fault ids go on from the last)")
            }
        case .faultsRemoved(let ids):
            if let index = ids.firstIndex(where: { faults.fault($0) == nil }) { return ("ids[\(index)]", "no fault \(ids[index]) is installed") }
        case .codesExpired, .keyScheduleAdvanced, .clockChanged, .reset, .faultFired, .delivery:
            break
        }
        return nil
    }

    /// The refusal for a user this world does not hold.
    private func unknown(user userID: String, field: String) -> (field: String, message: String)? {
        users[userID] == nil ? (field, "no user \"\(userID)\"") : nil
    }

    /// The refusal for a team, or an app group of it, the scenario does not have (`field.team_id`,
    /// `field.group_id`).
    private func unknown(team teamID: String, group groupID: String, field: String) -> (field: String, message: String)? {
        guard let team = context.clients.team(teamID) else { return (field + ".team_id", "no team \(teamID) in the scenario") }
        let groups = Set(team.clients.compactMap { context.clients.entry($0.clientID)?.groupID })
        return groups.contains(groupID) ? nil : (field + ".group_id", "no app group \(groupID) in team \(teamID)")
    }
}

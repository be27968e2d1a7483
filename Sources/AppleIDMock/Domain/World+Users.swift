extension World {
    /// Most users this scenario's mock holds (scenario and runtime together): 100,000, or fewer
    /// when users times teams would pass `Scenario.maxUserTeamPairs` (the index holds two
    /// identifiers per pair).
    var userCapacity: Int { Scenario.maxUsers(teams: context.scenario.teams.count) }

    /// Most users any mock holds.
    static var maxUserCount: Int { Scenario.maxUserCount }

    /// Adds a user at runtime (the scenario's rules were checked by the caller), with the
    /// identifiers computed before the lock was taken.
    func addUser(_ added: AddedUser, _ changes: inout WorldChanges) throws(UserOperationError) {
        guard users[added.user.id] == nil else { throw .duplicate(added.user.id) }
        guard users.count < userCapacity else { throw .full(userCapacity) }
        changes.emit(.userAdded(added))
    }

    /// The user an identifier names: a user id, or a `sub` in any team. With the team whose
    /// `sub` it was, when it was one. One dictionary hit each (a runtime id cannot take the
    /// shape of a `sub`, so the two never meet).
    func resolveUser(_ identifier: String) -> (userID: String, subjectTeam: String?)? {
        if users[identifier] != nil { return (identifier, nil) }
        guard let owner = owner(subject: identifier), let team = teamID(at: owner.team) else { return nil }
        return (owner.userID, team)
    }

    /// The user whose `sub` in `teamID` is `subject`.
    func user(subject: String, teamID: String) -> String? {
        guard let owner = owner(subject: subject), self.teamID(at: owner.team) == teamID else { return nil }
        return owner.userID
    }

    /// The team and user whose private relay address is `address` (apple-behaviour.md §6:
    /// relay addresses are per team), for mail sent to it.
    func user(relayAddress address: String) -> (teamID: String, userID: String)? {
        guard let owner = context.scenarioUserIndex.index.owner(relayAddress: address) ?? userIndex.owner(relayAddress: address),
              let team = teamID(at: owner.team) else { return nil }
        return (team, owner.userID)
    }

    /// Whose `sub` this is: a scenario user (added first) or one added at runtime.
    private func owner(subject: String) -> UserIndex.Owner? {
        context.scenarioUserIndex.index.owner(subject: subject) ?? userIndex.owner(subject: subject)
    }

    private func teamID(at index: Int) -> String? {
        let teams = context.scenario.teams
        return teams.indices.contains(index) ? teams[index].teamID : nil
    }

    /// The credential state a device reports for `identifier` (a user id or a `sub`) in the
    /// app `entry`.
    func credentialState(of identifier: String, for entry: ClientDirectory.Entry, now: Int64) -> CredentialState {
        guard let (userID, subjectTeam) = resolveUser(identifier), let account = users[userID] else { return .notFound }
        let teamID = entry.team.teamID
        let window = Int64(context.scenario.lifetimes.transferWindow)
        // A transfer away from this team, or into it when asked with the old team's identifier.
        let moved = (transfersOfUser[userID] ?? []).lazy.compactMap { transfers[$0] }.contains { record in
            now < record.createdAt + window
                && (record.fromTeam == teamID || (record.toTeam == teamID && subjectTeam == record.fromTeam))
        }
        if moved { return .transferred }
        if let subjectTeam, subjectTeam != teamID { return .notFound }
        let key = Consent.Key(teamID: teamID, groupID: entry.groupID, userID: userID)
        if account.deleted { return consents[key] != nil || endedConsents[key] != nil ? .revoked : .notFound }
        if consents[key] != nil { return .authorized }
        return endedConsents[key] != nil ? .revoked : .notFound
    }
}

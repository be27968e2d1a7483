/// Why a user could not be added.
public enum UserOperationError: Error, Equatable, Sendable {
    /// A user with this id exists.
    case duplicate(String)
    /// The mock holds as many users as it will.
    case full(Int)
}

/// What `ASAuthorizationAppleIDProvider.getCredentialState(forUserID:)` answers on a device.
public enum CredentialState: String, Sendable, Equatable {
    /// The user is signed in to the app group.
    case authorized
    /// The user stopped using Sign in with Apple for the app, the app revoked the token, or the
    /// account was deleted.
    case revoked
    /// The user never signed in to the app group (or the identifier is unknown).
    case notFound
    /// The user was moved to another team (apple-reference.md §8: native apps see `.transferred`).
    case transferred
}

extension World {
    /// Most users the mock holds (scenario and runtime together).
    static let maxUsers = 100_000

    /// Adds a user at runtime (the scenario's rules were checked by the caller).
    mutating func addUser(_ user: Scenario.User) throws(UserOperationError) {
        guard users[user.id] == nil else { throw .duplicate(user.id) }
        guard users.count < Self.maxUsers else { throw .full(Self.maxUsers) }
        users[user.id] = UserAccount(user: user, addedAtRuntime: true)
        userOrder.append(user.id)
        emit(.userAdded(userID: user.id))
    }

    /// The user an identifier names: a user id, or a `sub` in any team. With the team whose
    /// `sub` it was, when it was one.
    func resolveUser(_ identifier: String) -> (userID: String, subjectTeam: String?)? {
        if users[identifier] != nil { return (identifier, nil) }
        for team in context.scenario.teams {
            if let userID = user(subject: identifier, teamID: team.teamID) { return (userID, team.teamID) }
        }
        return nil
    }

    /// The credential state a device reports for `identifier` (a user id or a `sub`) in the
    /// app `entry`.
    func credentialState(of identifier: String, for entry: ClientDirectory.Entry, now: Int64) -> CredentialState {
        guard let (userID, subjectTeam) = resolveUser(identifier), let account = users[userID] else { return .notFound }
        let teamID = entry.team.teamID
        let window = Int64(context.scenario.lifetimes.transferWindow)
        // A transfer away from this team, or into it when asked with the old team's identifier.
        let moved = transfers.values.contains { record in
            record.userID == userID && now < record.createdAt + window
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

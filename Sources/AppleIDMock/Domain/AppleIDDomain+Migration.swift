import JOSE

extension AppleIDDomain {
    /// `POST /auth/usermigrationinfo` (apple-reference.md §8). The sending team posts `sub` and
    /// `target` and gets a `transfer_sub`; the receiving team posts `transfer_sub` and gets its
    /// own `sub` (and the relay address when the user hid theirs). `bearer` is the access token
    /// from the `Authorization` header.
    public func userMigrationInfo(_ form: [String: String], bearer: String?) throws(OAuthError) -> JSONObject {
        let now = clock.seconds
        let entry = try authenticateClient(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        let teamID = entry.team.teamID
        // TN3107: a token that does not match the client's team is invalid_request.
        guard let bearer, liveAccessToken(bearer, teamID: teamID, now: now) != nil else { throw .invalidRequest }
        let window = Int64(scenario.lifetimes.transferWindow)
        var answer = JSONObject()
        if let transferSubject = form["transfer_sub"] {
            guard let record = transfers.record(transferSubject: transferSubject), record.toTeam == teamID,
                  now < record.createdAt + window, let user = scenario.user(record.userID) else { throw .invalidRequest }
            answer["sub"] = .string(Identity.subject(teamID: teamID, userID: user.id))
            if hidEmail(userID: user.id, teamID: record.fromTeam) {
                // Relay addresses are team-scoped (§6): the receiving team gets its own.
                answer["email"] = .string(Identity.relayAddress(teamID: teamID, userID: user.id))
                answer["is_private_email"] = true
            }
            return answer
        }
        guard let subject = form["sub"], let target = form["target"] else { throw .invalidRequest }
        guard target != teamID, clients.team(target) != nil,
              let user = scenario.users.first(where: { Identity.subject(teamID: teamID, userID: $0.id) == subject }),
              hasConsent(userID: user.id, teamID: teamID) else { throw .invalidRequest }
        answer["transfer_sub"] = .string(transfers.record(userID: user.id, fromTeam: teamID, toTeam: target, now: now, window: window).transferSubject)
        return answer
    }

    private func hasConsent(userID: String, teamID: String) -> Bool {
        scenario.teams.first { $0.teamID == teamID }?.clients.contains { client in
            clients.entry(client.clientID).map { consents.consent(for: .init(teamID: teamID, groupID: $0.groupID, userID: userID)) != nil } ?? false
        } ?? false
    }

    private func hidEmail(userID: String, teamID: String) -> Bool {
        scenario.teams.first { $0.teamID == teamID }?.clients.contains { client in
            clients.entry(client.clientID).flatMap { consents.consent(for: .init(teamID: teamID, groupID: $0.groupID, userID: userID)) }?.hideEmail ?? false
        } ?? false
    }
}

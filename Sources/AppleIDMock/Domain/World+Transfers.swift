import JOSE

extension World {
    /// `POST /auth/usermigrationinfo` (apple-behaviour.md §8) for an authenticated client of
    /// `teamID` bearing `bearer`. The sending team posts `sub` and `target` and gets a
    /// `transfer_sub`; the receiving team posts `transfer_sub` and gets its own `sub` (and the
    /// relay address when the user hid theirs).
    func userMigrationInfo(_ request: MigrationRequest, teamID: String, now: Int64,
                           _ changes: inout WorldChanges) throws(OAuthError) -> MigrationAnswer {
        // TN3107: a token that does not match the client's team is invalid_request.
        guard let bearer = request.bearer else { throw .invalidRequest.because("Authorization: Bearer header missing") }
        guard liveAccessToken(bearer, teamID: teamID, now: now) != nil else {
            throw .invalidRequest.because("bearer token is not a live access token of team \(teamID) (from grant_type=client_credentials)")
        }
        let window = Int64(context.scenario.lifetimes.transferWindow)
        if let transferSubject = request.transferSubject {
            guard let record = transfers[transferSubject], record.toTeam == teamID else {
                throw .invalidRequest.because("transfer_sub \(LogText.hint(transferSubject)) is not a transfer to team \(teamID)")
            }
            guard now < record.createdAt + window else {
                throw .invalidRequest.because("transfer_sub \(LogText.hint(transferSubject)) expired at mock time "
                    + "\(ClientSecretVerifier.time(record.createdAt + window)) (transfer_window \(window) s)")
            }
            guard let account = users[record.userID], !account.deleted else {
                throw .invalidRequest.because("the Apple Account of transfer_sub \(LogText.hint(transferSubject)) was deleted")
            }
            // Relay addresses are team-scoped (§6): the receiving team gets its own.
            let relay = hidEmail(userID: account.user.id, teamID: record.fromTeam) ? Identity.relayAddress(teamID: teamID, user: account.user) : nil
            return .subject(Identity.subject(teamID: teamID, userID: account.user.id), relayEmail: relay)
        }
        guard let subject = request.subject, let target = request.target else {
            throw .invalidRequest.because("sub and target missing (or transfer_sub, for the receiving team)")
        }
        guard target != teamID else { throw .invalidRequest.because("target \(LogText.clip(target)) is the sending team itself") }
        guard context.clients.team(target) != nil else { throw .invalidRequest.because("target \(LogText.clip(target)) is not a team in the scenario") }
        guard let userID = user(subject: subject, teamID: teamID) else {
            throw .invalidRequest.because("sub \(LogText.clip(subject)) is not a user of team \(teamID)")
        }
        guard consentKeysOfUser[userID]?.contains(where: { $0.teamID == teamID }) == true else {
            throw .invalidRequest.because("sub \(LogText.clip(subject)) has no consent with team \(teamID)")
        }
        return .transferSubject(startTransfer(userID: userID, fromTeam: teamID, toTeam: target, now: now, &changes).transferSubject)
    }

    /// The record for a user moving between teams, created on first request; the `transfer_sub`
    /// is one-to-one per (user, target team) and stable across requests (§8). Asking again after
    /// the window has closed starts a new window (TN3159: transfer again).
    private func startTransfer(userID: String, fromTeam: String, toTeam: String, now: Int64, _ changes: inout WorldChanges) -> TransferRecord {
        let subject = Identity.subject(teamID: "transfer|\(fromTeam)|\(toTeam)", userID: userID)
        if let existing = transfers[subject], now < existing.createdAt + Int64(context.scenario.lifetimes.transferWindow) { return existing }
        let record = TransferRecord(userID: userID, fromTeam: fromTeam, toTeam: toTeam, transferSubject: subject, createdAt: now)
        changes.emit(.transferStarted(record))
        return record
    }

    private func hidEmail(userID: String, teamID: String) -> Bool {
        consentKeysOfUser[userID]?.contains { $0.teamID == teamID && consents[$0]?.hideEmail == true } == true
    }
}

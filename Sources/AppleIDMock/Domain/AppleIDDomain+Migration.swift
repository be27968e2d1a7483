import JOSE

extension AppleIDDomain {
    /// `POST /auth/usermigrationinfo` (apple-behaviour.md §8) over decoded form fields; `bearer`
    /// the access token from the `Authorization` header, in `request.bearer`.
    func userMigrationInfo(_ request: MigrationRequest) throws(OAuthError) -> MigrationAnswer {
        let entry = try authenticateClient(clientID: request.clientID, clientSecret: request.clientSecret, now: now)
        return try owner.perform { world, now, changes throws(OAuthError) in
            try world.userMigrationInfo(request, teamID: entry.team.teamID, now: now, &changes)
        }.0
    }
}

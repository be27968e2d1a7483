import JOSE

extension AppleIDDomain {
    /// `POST /auth/usermigrationinfo` (apple-reference.md §8) over decoded form fields; `bearer`
    /// is the access token from the `Authorization` header.
    package func userMigrationInfo(_ form: [String: String], bearer: String?) throws(OAuthError) -> JSONObject {
        let entry = try authenticateClient(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        return try owner.perform { world, now, changes throws(OAuthError) in
            try world.userMigrationInfo(form, teamID: entry.team.teamID, bearer: bearer, now: now, &changes)
        }.0
    }
}

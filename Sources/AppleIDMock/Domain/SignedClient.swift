import JOSE

/// A client whose `client_secret` signature checked out, its claims not yet checked against the clock.
struct SignedClient: Sendable {
    /// The client's directory entry.
    let entry: ClientDirectory.Entry
    /// The secret's claims.
    let claims: JSONObject

    /// Checks the claims at mock time `now`; throws `invalid_client`.
    func check(_ verifier: ClientSecretVerifier, at now: Int64) throws(OAuthError) {
        try verifier.check(claims, clientID: entry.client.clientID, teamID: entry.team.teamID, now: now)
    }
}

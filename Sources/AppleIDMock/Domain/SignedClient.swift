import JOSE

/// A client whose `client_secret` signature checked out, its claims not yet checked against the clock.
struct SignedClient: Sendable {
    /// The client's directory entry.
    let entry: ClientDirectory.Entry
    /// The secret's claims.
    let claims: JSONObject
    /// The developer key that signed it.
    let keyID: String

    /// Checks that the client and key have propagated (`start` is the mock clock's start or last
    /// reset), then the claims, at mock time `now`; throws `invalid_client`.
    func check(_ verifier: ClientSecretVerifier, at now: Int64, start: Int64) throws(OAuthError) {
        try verifier.checkPropagated(client: entry.client, keyID: keyID, teamID: entry.team.teamID, now: now, start: start)
        try verifier.check(claims, clientID: entry.client.clientID, teamID: entry.team.teamID, now: now)
    }
}

import JOSE

extension AppleIDDomain {
    /// Authenticates the client of a token, revoke or migration request (apple-reference.md §3):
    /// returns its directory entry or throws `invalid_client`.
    package func authenticateClient(clientID: String?, clientSecret: String?, now: Int64) throws(OAuthError) -> ClientDirectory.Entry {
        let client = try signedClient(clientID: clientID, clientSecret: clientSecret)
        try client.check(clientSecrets, at: now)
        return client.entry
    }

    /// The client of a request whose `client_secret` signature checked out; its claims are
    /// checked against the clock by `SignedClient.check`, inside the operation that follows.
    func signedClient(clientID: String?, clientSecret: String?) throws(OAuthError) -> SignedClient {
        guard let clientID else { throw .invalidClient.because("client_id missing") }
        guard let entry = clients.entry(clientID) else { throw .invalidClient.because("client_id \(LogText.clip(clientID)) is not a client in the scenario") }
        guard let clientSecret else { throw .invalidClient.because("client_secret missing") }
        return SignedClient(entry: entry, claims: try clientSecrets.signedClaims(clientSecret, teamID: entry.team.teamID))
    }

    /// `POST /auth/token` over already-decoded form fields (§1.3): authenticates the client,
    /// then runs the grant. Returns the JSON answer or throws Apple's error (`OAuthError`; a
    /// signing failure is the mock's own fault and surfaces as a logged 500). The secret's time
    /// checks and the grant are one critical section: one read of the clock for both.
    package func token(_ form: [String: String]) throws -> JSONObject {
        let client = try signedClient(clientID: form["client_id"], clientSecret: form["client_secret"])
        let entry = client.entry
        let verifier = clientSecrets
        let lifetime = JSONValue.int(Int64(scenario.lifetimes.accessToken))
        var answer = JSONObject()
        switch form["grant_type"] {
        case "authorization_code":
            guard let code = form["code"], !code.isEmpty else {
                try client.check(verifier, at: now)
                throw OAuthError.invalidRequest.because("code missing")
            }
            let granted = try owner.perform { world, now, changes throws(OAuthError) in
                try client.check(verifier, at: now)
                return try world.redeem(code: code, entry: entry, redirectURI: form["redirect_uri"], verifier: form["code_verifier"], now: now, &changes)
            }.0
            answer["access_token"] = .string(granted.accessToken)
            answer["token_type"] = "Bearer"
            answer["expires_in"] = lifetime
            answer["refresh_token"] = granted.refreshToken.map(JSONValue.string) ?? .null
            answer["id_token"] = .string(try signed(granted))
        case "refresh_token":
            guard let token = form["refresh_token"], !token.isEmpty else {
                try client.check(verifier, at: now)
                throw OAuthError.invalidRequest.because("refresh_token missing")
            }
            let granted = try owner.perform { world, now, changes throws(OAuthError) in
                try client.check(verifier, at: now)
                return try world.refresh(token: token, entry: entry, now: now, &changes)
            }.0
            answer["access_token"] = .string(granted.accessToken)
            answer["token_type"] = "Bearer"
            answer["expires_in"] = lifetime
            if scenario.compatibility.refreshReturnsRefreshToken { answer["refresh_token"] = .string(token) }
            if scenario.compatibility.refreshReturnsIDToken { answer["id_token"] = .string(try signed(granted)) }
        case "client_credentials":
            try client.check(verifier, at: now)
            // Only for team-transfer migration (§8 [D]).
            guard form["scope"] == "user.migration" else {
                throw OAuthError.invalidScope.because("client_credentials needs scope user.migration, got \(form["scope"].map(LogText.clip) ?? "none")")
            }
            let token = try owner.perform { world, now, changes throws(OAuthError) in try world.clientCredentials(entry: entry, now: now, &changes) }.0
            answer["access_token"] = .string(token)
            answer["token_type"] = "Bearer"
            answer["expires_in"] = lifetime
        case nil:
            try client.check(verifier, at: now)
            throw OAuthError.invalidRequest.because("grant_type missing")
        case let other?:
            try client.check(verifier, at: now)
            throw OAuthError.unsupportedGrantType.because(
                "grant_type \(LogText.clip(other)) is not authorization_code, refresh_token or client_credentials")
        }
        return answer
    }

    private func signed(_ granted: TokenGrant) throws -> String {
        guard let claims = granted.claims else { throw OAuthError.invalidRequest.because("no id_token claims for this grant") }
        return try sign(claims, with: granted.signingKey, defect: granted.defect)
    }

    /// `POST /auth/revoke` (§1.4): authenticates the client; a token it owns ends the token and
    /// the user's consent for the app group. Unknown tokens, and tokens of another client, are
    /// accepted silently; so is a missing `token`, as Apple does (§11 pitfall 18), unless the
    /// scenario's `revoke_requires_token` is on.
    package func revoke(_ form: [String: String]) throws(OAuthError) {
        let entry = try authenticateClient(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        guard let token = form["token"], !token.isEmpty else {
            if scenario.compatibility.revokeRequiresToken { throw .invalidRequest.because("token missing (compatibility.revoke_requires_token is true)") }
            return
        }
        owner.perform { world, now, changes in world.revoke(token: token, entry: entry, now: now, &changes) }
    }
}

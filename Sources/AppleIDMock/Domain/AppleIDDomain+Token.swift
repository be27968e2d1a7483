import JOSE

extension AppleIDDomain {
    /// Authenticates the client of a token, revoke or migration request (apple-behaviour.md §3):
    /// returns its directory entry or throws `invalid_client`.
    func authenticateClient(clientID: String?, clientSecret: String?, now: Int64) throws(OAuthError) -> ClientDirectory.Entry {
        let client = try signedClient(clientID: clientID, clientSecret: clientSecret)
        try client.check(clientSecrets, at: now, start: owner.read { world, _ in world.start })
        return client.entry
    }

    /// Checks `client` at mock time now, outside an operation (for a request refused before it
    /// reaches the state, or that changes nothing).
    func checkNow(_ client: SignedClient) throws(OAuthError) {
        let (now, start) = owner.read { world, now in (now, world.start) }
        try client.check(clientSecrets, at: now, start: start)
    }

    /// The client of a request whose `client_secret` signature checked out; its claims are
    /// checked against the clock by `SignedClient.check`, inside the operation that follows.
    func signedClient(clientID: String?, clientSecret: String?) throws(OAuthError) -> SignedClient {
        guard let clientID else { throw .invalidClient.because("client_id missing") }
        guard let entry = clients.entry(clientID) else { throw .invalidClient.because("client_id \(LogText.clip(clientID)) is not a client in the scenario") }
        guard let clientSecret else { throw .invalidClient.because("client_secret missing") }
        let (claims, keyID) = try clientSecrets.signedClaims(clientSecret, teamID: entry.team.teamID, groupID: entry.groupID)
        return SignedClient(entry: entry, claims: claims, keyID: keyID)
    }

    /// `POST /auth/token` (§1.3): authenticates the client, then runs the grant. The secret's
    /// time checks and the grant are one critical section: one read of the clock for both.
    package func token(_ request: TokenRequest) throws(TokenFailure) -> TokenAnswer {
        let client: SignedClient
        do {
            client = try signedClient(clientID: request.clientID, clientSecret: request.clientSecret)
        } catch {
            throw .refused(error)
        }
        let answer: TokenAnswer
        let toSign: TokenGrant?
        do {
            (answer, toSign) = try grant(request, client: client)
        } catch {
            throw .refused(error)
        }
        guard let toSign else { return answer }
        var signed = answer
        do {
            signed.idToken = try sign(toSign)
        } catch {
            throw .signing("\(error)")
        }
        return signed
    }

    /// The grant `request` asks for, of an authenticated `client`, and the grant whose id_token
    /// the answer carries (signed by the caller, outside the operation), if any.
    private func grant(_ request: TokenRequest, client: SignedClient) throws(OAuthError) -> (TokenAnswer, idToken: TokenGrant?) {
        let entry = client.entry
        let verifier = clientSecrets
        let lifetime = scenario.lifetimes.accessToken
        switch request.grantType {
        case "authorization_code":
            guard let code = request.code, !code.isEmpty else {
                try checkNow(client)
                throw OAuthError.invalidRequest.because("code missing")
            }
            let granted = try owner.perform { world, now, changes throws(OAuthError) in
                try client.check(verifier, at: now, start: world.start)
                return try world.redeem(code: code, entry: entry, redirectURI: request.redirectURI, verifier: request.codeVerifier, now: now, &changes)
            }.0
            return (TokenAnswer(accessToken: granted.accessToken, expiresIn: lifetime, refreshToken: granted.refreshToken.map { .issued($0) } ?? .none,
                                idToken: nil), granted)
        case "refresh_token":
            guard let token = request.refreshToken, !token.isEmpty else {
                try checkNow(client)
                // The refresh token sent as `code`: Apple answers unsupported_grant_type (§1.3, observed).
                if let code = request.code, !code.isEmpty {
                    throw OAuthError.unsupportedGrantType.because("grant_type refresh_token with the token in code, not refresh_token")
                }
                throw OAuthError.invalidRequest.because("refresh_token missing")
            }
            let granted = try owner.perform { world, now, changes throws(OAuthError) in
                try client.check(verifier, at: now, start: world.start)
                return try world.refresh(token: token, entry: entry, now: now, &changes)
            }.0
            let compatibility = scenario.compatibility
            return (TokenAnswer(accessToken: granted.accessToken, expiresIn: lifetime,
                                refreshToken: compatibility.refreshReturnsRefreshToken ? .issued(token) : .omitted, idToken: nil),
                    compatibility.refreshReturnsIDToken ? granted : nil)
        case "client_credentials":
            try checkNow(client)
            // Only for team-transfer migration (§8 [D]).
            guard request.scope == "user.migration" else {
                throw OAuthError.invalidScope.because("client_credentials needs scope user.migration, got \(request.scope.map(LogText.clip) ?? "none")")
            }
            let token = try owner.perform { world, now, changes throws(OAuthError) in try world.clientCredentials(entry: entry, now: now, &changes) }.0
            return (TokenAnswer(accessToken: token, expiresIn: lifetime, refreshToken: .omitted, idToken: nil), nil)
        case nil:
            try checkNow(client)
            throw OAuthError.invalidRequest.because("grant_type missing")
        case let other?:
            try checkNow(client)
            throw OAuthError.unsupportedGrantType.because(
                "grant_type \(LogText.clip(other)) is not authorization_code, refresh_token or client_credentials")
        }
    }

    /// The id_token of `granted`, spoiled as its code's defect says.
    private func sign(_ granted: TokenGrant) throws -> String {
        guard let claims = granted.claims else { throw JOSEError.invalidKey("no id_token claims for this grant") }
        return try sign(claims, with: granted.signingKey, defect: granted.defect)
    }

    /// `POST /auth/revoke` (§1.4): authenticates the client; a token it owns ends the token and
    /// the user's consent for the app group. Unknown tokens, and tokens of another client, are
    /// accepted silently; so is a missing `token`, as Apple does (§11 pitfall 18), unless the
    /// scenario's `revoke_requires_token` is on.
    package func revoke(_ request: RevokeRequest) throws(OAuthError) {
        let entry = try authenticateClient(clientID: request.clientID, clientSecret: request.clientSecret, now: now)
        guard let token = request.token, !token.isEmpty else {
            if scenario.compatibility.revokeRequiresToken { throw .invalidRequest.because("token missing (compatibility.revoke_requires_token is true)") }
            return
        }
        owner.perform { world, now, changes in world.revoke(token: token, entry: entry, now: now, &changes) }
    }
}

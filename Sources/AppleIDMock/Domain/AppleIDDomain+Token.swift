import JOSE

extension AppleIDDomain {
    /// Authenticates the client of a token, revoke or migration request (apple-reference.md §3):
    /// returns its directory entry or throws `invalid_client`.
    public func authenticateClient(clientID: String?, clientSecret: String?, now: Int64) throws(OAuthError) -> ClientDirectory.Entry {
        guard let clientID, let entry = clients.entry(clientID), let clientSecret else { throw .invalidClient }
        try clientSecrets.verify(clientSecret, clientID: clientID, teamID: entry.team.teamID, now: now)
        return entry
    }

    /// `POST /auth/token` over already-decoded form fields (§1.3): authenticates the client,
    /// then runs the grant. Returns the JSON answer or throws Apple's error.
    public func token(_ form: [String: String]) throws -> JSONObject {
        let now = clock.seconds
        let entry = try authenticateClient(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        switch form["grant_type"] {
        case "authorization_code": return try exchangeCode(form, entry, now: now)
        case "refresh_token": return try refresh(form, entry, now: now)
        case "client_credentials": return try clientCredentials(form, entry, now: now)
        case nil: throw OAuthError.invalidRequest
        default: throw OAuthError.unsupportedGrantType
        }
    }

    private func exchangeCode(_ form: [String: String], _ entry: ClientDirectory.Entry, now: Int64) throws -> JSONObject {
        guard let code = form["code"], !code.isEmpty else { throw OAuthError.invalidRequest }
        let redirectURI = form["redirect_uri"]
        let verifier = form["code_verifier"]
        let clientID = entry.client.clientID
        let consents = self.consents
        let grant = try codes.redeem(code, now: now, issuedExpiry: issuedExpiry(ofCode:)) { grant -> OAuthError? in
            if grant.clientID != clientID { return .clientMismatch(clientID) }
            if grant.redirectURI != redirectURI {
                // Send redirect_uri only when the authorize request had one (§1.3 [D]).
                guard let redirectURI else { return .invalidRequest }
                return .redirectMismatch(redirectURI)
            }
            if consents.consent(id: grant.consentID) == nil { return .codeExpired }
            if let challenge = grant.codeChallenge {
                // Apple rejects an exchange without code_verifier once a challenge was sent (§1.2 [O]).
                guard let verifier, Self.pkceMatches(verifier: verifier, challenge: challenge, method: grant.codeChallengeMethod) else {
                    return .invalidGrant
                }
            }
            return nil
        }.get()
        guard let (_, consent) = consents.consent(id: grant.consentID), let user = scenario.user(grant.userID) else {
            throw OAuthError.codeExpired
        }
        let accessToken = tokens.encode(.init(kind: "a", consentID: consent.id, clientIndex: entry.index, issuedAt: UInt32(clamping: now)))
        let refreshToken = tokens.encode(.init(kind: "r", consentID: consent.id, clientIndex: entry.index, issuedAt: UInt32(clamping: now)))
        var claims = identityClaims(for: entry, user: user, consent: consent, isFirst: grant.isFirstAuthorization, now: now)
        claims.nonce = grant.nonce
        claims.accessTokenHash = IdentityTokenClaims.halfHash(accessToken)
        claims.authTime = grant.authTime
        if grant.flow == .native && grant.isFirstAuthorization { claims.realUserStatus = user.realUserStatus }
        var answer = JSONObject()
        answer["access_token"] = .string(accessToken)
        answer["token_type"] = "Bearer"
        answer["expires_in"] = .int(Int64(scenario.lifetimes.accessToken))
        answer["refresh_token"] = .string(refreshToken)
        answer["id_token"] = .string(try sign(claims))
        return answer
    }

    private func refresh(_ form: [String: String], _ entry: ClientDirectory.Entry, now: Int64) throws -> JSONObject {
        guard let token = form["refresh_token"], !token.isEmpty else { throw OAuthError.invalidRequest }
        guard let payload = tokens.decode(token), payload.kind == "r", payload.clientIndex == entry.index else { throw OAuthError.invalidGrant }
        guard let (key, consent) = consents.consent(id: payload.consentID), let user = scenario.user(key.userID) else {
            // Revoked by the app: the token itself is dead. Removed by the user: TN3107 says
            // invalid_request (open question 7, a knob).
            if consents.revocation(id: payload.consentID) == .byUser {
                throw OAuthError(scenario.compatibility.revokedConsentRefreshError)
            }
            throw OAuthError.invalidGrant
        }
        let accessToken = tokens.encode(.init(kind: "a", consentID: consent.id, clientIndex: entry.index, issuedAt: UInt32(clamping: now)))
        var answer = JSONObject()
        answer["access_token"] = .string(accessToken)
        answer["token_type"] = "Bearer"
        answer["expires_in"] = .int(Int64(scenario.lifetimes.accessToken))
        if scenario.compatibility.refreshReturnsRefreshToken { answer["refresh_token"] = .string(token) }
        if scenario.compatibility.refreshReturnsIDToken {
            // After a refresh: no auth_time, no c_hash, no at_hash (§1.3 [O]).
            answer["id_token"] = .string(try sign(identityClaims(for: entry, user: user, consent: consent, isFirst: false, now: now)))
        }
        return answer
    }

    private func clientCredentials(_ form: [String: String], _ entry: ClientDirectory.Entry, now: Int64) throws -> JSONObject {
        // Only for team-transfer migration (§8 [D]).
        guard form["scope"] == "user.migration" else { throw OAuthError.invalidScope }
        var answer = JSONObject()
        answer["access_token"] = .string(tokens.encode(.init(kind: "a", consentID: 0, clientIndex: entry.index, issuedAt: UInt32(clamping: now))))
        answer["token_type"] = "Bearer"
        answer["expires_in"] = .int(Int64(scenario.lifetimes.accessToken))
        return answer
    }

    /// RFC 7636 §4.6: `S256` compares BASE64URL(SHA256(verifier)); `plain` compares as is.
    static func pkceMatches(verifier: String, challenge: String, method: String?) -> Bool {
        guard (43...128).contains(verifier.utf8.count) else { return false }
        switch method {
        case "S256": return Base64URL.encode(SHA256.hash(Array(verifier.utf8))) == challenge
        case "plain": return verifier == challenge
        default: return false
        }
    }

    /// `POST /auth/revoke` (§1.4): authenticates the client; a token it owns ends the token and
    /// the user's consent for the app group. Unknown tokens, and tokens of another client, are
    /// accepted silently.
    public func revoke(_ form: [String: String]) throws(OAuthError) {
        let now = clock.seconds
        let entry = try authenticateClient(clientID: form["client_id"], clientSecret: form["client_secret"], now: now)
        guard let token = form["token"], !token.isEmpty else { throw .invalidRequest }
        guard let payload = tokens.decode(token), payload.kind != "c", payload.consentID != 0, payload.clientIndex == entry.index else { return }
        consents.revoke(id: payload.consentID, by: .byApp)
    }

    /// The live access token `token` issued to a client of `teamID`, or nil.
    func liveAccessToken(_ token: String, teamID: String, now: Int64) -> TokenCodec.Payload? {
        guard let payload = tokens.decode(token), payload.kind == "a",
              Int64(payload.issuedAt) + Int64(scenario.lifetimes.accessToken) > now,
              clients.entry(index: payload.clientIndex)?.team.teamID == teamID else { return nil }
        if payload.consentID != 0 && consents.consent(id: payload.consentID) == nil { return nil }
        return payload
    }
}

import JOSE

extension World {
    /// A sign-in: the user's consent for the app group (created on the first authorization,
    /// one critical section with the check), a code bound to the client, redirect URI and PKCE
    /// challenge, and the id_token claims.
    func grant(_ request: GrantRequest, now: Int64, _ changes: inout WorldChanges) throws(GrantError) -> GrantResult {
        guard let account = users[request.userID] else { throw .unknownUser(request.userID) }
        guard !account.deleted else { throw .accountDeleted(request.userID) }
        guard let entry = context.clients.entry(request.clientID) else { throw .unknownClient(request.clientID) }
        let user = account.user
        let key = Consent.Key(teamID: entry.team.teamID, groupID: entry.groupID, userID: user.id)
        if !request.issuesCode {
            // `/__mock/id-token`: what a sign-in would give now, changing nothing.
            let existing = consents[key]
            let hide = (request.hideEmail ?? existing?.hideEmail ?? user.hideEmail) && !user.managed
            var claims = identityClaims(for: entry, user: user, scopes: existing?.scopes ?? ["email"], hideEmail: hide, isFirst: existing == nil, now: now)
            claims.nonce = request.nonce
            claims.authTime = now
            return GrantResult(user: user, entry: entry, consentScopes: existing?.scopes ?? ["email"], hideEmail: hide, isFirst: existing == nil,
                               code: nil, claims: claims, signingKey: signingKey)
        }
        guard pendingCodes.count < context.codeCapacity else { throw .capacity(.codes(context.codeCapacity)) }
        let (consent, granted) = authorize(key, scopes: request.scopes.intersection(["name", "email"]),
                                           hideEmail: (request.hideEmail ?? user.hideEmail) && !user.managed, now: now)
        let isFirst = granted != nil
        // Codes for one consent in one second differ only by their random part (4 letters and 2
        // bytes, about 3e10 values): thousands a second can draw one still pending, which would
        // replace that grant (its nonce, redirect and PKCE) and leave its holder "already used".
        // Draw again; a source that keeps repeating itself is refused like a full store.
        var code = ""
        for _ in 0..<Self.codeDraws {
            do {
                code = try encode(.code, consentID: consent.id, client: entry, now: now, &changes)
            } catch {
                throw .timeOutOfRange
            }
            if pendingCodes[code] == nil { break }
        }
        guard pendingCodes[code] == nil else { throw .capacity(.codes(context.codeCapacity)) }
        let lifetime = Int64(context.scenario.lifetimes.authorizationCode)
        if let granted { changes.emit(.consentGranted(granted)) }
        changes.emit(.codeIssued(code: code, grant: AuthorizationGrant(
            clientID: request.clientID, redirectURI: request.redirectURI, consentID: consent.id, teamID: entry.team.teamID, userID: user.id,
            nonce: request.nonce, codeChallenge: request.codeChallenge, codeChallengeMethod: request.codeChallengeMethod,
            authTime: now, expiresAt: now + lifetime, flow: request.flow, isFirstAuthorization: isFirst, defect: request.defect)))
        var claims = identityClaims(for: entry, user: user, scopes: consent.scopes, hideEmail: consent.hideEmail, isFirst: isFirst, now: now)
        claims.nonce = request.nonce
        claims.codeHash = IdentityTokenClaims.halfHash(code)
        claims.authTime = now
        if request.flow == .native && isFirst { claims.realUserStatus = user.realUserStatus }
        return GrantResult(user: user, entry: entry, consentScopes: consent.scopes, hideEmail: consent.hideEmail, isFirst: isFirst,
                           code: code, claims: claims, signingKey: signingKey)
    }

    /// The user's consent for the group, and its grant when this is the first authorization
    /// (nothing changes until the grant's event applies).
    private func authorize(_ key: Consent.Key, scopes: Set<String>, hideEmail: Bool, now: Int64) -> (Consent, ConsentGrant?) {
        if let existing = consents[key] { return (existing, nil) }
        let consent = Consent(id: nextConsentID, scopes: scopes, hideEmail: hideEmail, grantedAt: now)
        let grant = ConsentGrant(userID: key.userID, teamID: key.teamID, groupID: key.groupID, consentID: consent.id, scopes: scopes,
                                 hideEmail: hideEmail,
                                 relayAddress: hideEmail ? relayAddress(teamID: key.teamID, userID: key.userID) : nil, at: now)
        return (consent, grant)
    }

    /// Fresh codes drawn at most for one grant when each equals a pending one.
    static let codeDraws = 8

    /// The event that drops the codes expired at `now`, when there are any.
    func expiredCodes(now: Int64) -> DomainEvent? {
        let count = pendingCodes.expiredCount(by: now)
        return count > 0 ? .codesExpired(at: now, count: count) : nil
    }

    /// Pending codes (expired ones linger until the next grant prunes them).
    var pendingCodeCount: Int { pendingCodes.count }

    // MARK: - /auth/token

    /// Redeems `code` for `entry`: fails when unknown, used, expired, or bound to another client,
    /// redirect URI or PKCE verifier; only a fully successful redemption consumes the code
    /// (§1.2, §1.3, §9). A genuine code that is no longer pending and not yet expired was used.
    func redeem(code: String, entry: ClientDirectory.Entry, redirectURI: String?, verifier: String?, now: Int64,
                _ changes: inout WorldChanges) throws(OAuthError) -> TokenGrant {
        guard let grant = pendingCodes[code] else {
            guard let payload = codec.decode(code), payload.kind == .code else {
                throw .codeExpired.because("code unknown: not a code this mock issued")
            }
            // A genuine code from the mock's future (the clock moved back since) is never "used".
            if payload.issuedAt > now {
                throw .codeExpired.because("code issued at mock time \(ClientSecretVerifier.time(payload.issuedAt)), after now "
                                           + "(\(ClientSecretVerifier.time(now))): the clock moved back")
            }
            let expiresAt = payload.issuedAt + Int64(context.scenario.lifetimes.authorizationCode)
            if now < expiresAt { throw .codeAlreadyUsed.because("code already used") }
            throw .codeExpired.because("code expired at mock time \(ClientSecretVerifier.time(now)) (exp \(ClientSecretVerifier.time(expiresAt)))")
        }
        // A code issued after now (the clock moved back since) is no more valid than an expired
        // one: its id_token would have auth_time after iat.
        if grant.authTime > now {
            throw .codeExpired.because("code issued at mock time \(ClientSecretVerifier.time(grant.authTime)), after now "
                                       + "(\(ClientSecretVerifier.time(now))): the clock moved back")
        }
        if now >= grant.expiresAt {
            throw .codeExpired.because("code expired at mock time \(ClientSecretVerifier.time(now)) (exp \(ClientSecretVerifier.time(grant.expiresAt)))")
        }
        if grant.clientID != entry.client.clientID {
            throw .clientMismatch(entry.client.clientID).because("code issued to another client (issued to \(grant.clientID), got \(entry.client.clientID))")
        }
        if grant.redirectURI != redirectURI {
            // Send redirect_uri only when the authorize request had one (§1.3 [D]).
            guard let redirectURI else {
                throw .invalidRequest.because("redirect_uri missing; the code was issued to \(grant.redirectURI.map(LogText.clip) ?? "none")")
            }
            throw .redirectMismatch(redirectURI).because(
                "code issued to another redirect_uri (issued to \(grant.redirectURI.map(LogText.clip) ?? "none"), got \(LogText.clip(redirectURI)))")
        }
        guard let (_, consent) = self.consent(id: grant.consentID), let account = users[grant.userID], !account.deleted else {
            throw .codeExpired.because(users[grant.userID]?.deleted == true
                ? "the Apple Account of \(grant.userID), the code's user, was deleted"
                : "the consent the code was issued under was revoked")
        }
        if let challenge = grant.codeChallenge {
            // Apple rejects an exchange without code_verifier once a challenge was sent (§1.2 [O]).
            guard let verifier else { throw .invalidGrant.because("code_verifier missing; the code was issued with a code_challenge") }
            guard Self.pkceMatches(verifier: verifier, challenge: challenge, method: grant.codeChallengeMethod) else {
                let length = verifier.utf8.count
                throw .invalidGrant.because((43...128).contains(length)
                    ? "code_verifier does not match the code_challenge (\(grant.codeChallengeMethod ?? "plain"))"
                    : "code_verifier is \(length) characters; RFC 7636 needs 43 to 128")
            }
        }
        let accessToken: String, refreshToken: String
        do {
            accessToken = try encode(.access, consentID: consent.id, client: entry, now: now, &changes)
            refreshToken = try encode(.refresh, consentID: consent.id, client: entry, now: now, &changes)
        } catch {
            throw .invalidRequest.because(Self.clockBeyondTokens)
        }
        changes.emit(.codeRedeemed(code: code, clientID: entry.client.clientID, userID: grant.userID, consentID: consent.id))
        changes.emit(.tokensIssued(grantType: "authorization_code", clientID: entry.client.clientID, userID: grant.userID, consentID: consent.id))
        var claims = identityClaims(for: entry, user: account.user, scopes: consent.scopes, hideEmail: consent.hideEmail,
                                    isFirst: grant.isFirstAuthorization, now: now)
        claims.nonce = grant.nonce
        claims.accessTokenHash = IdentityTokenClaims.halfHash(accessToken)
        claims.authTime = grant.authTime
        if grant.flow == .native && grant.isFirstAuthorization { claims.realUserStatus = account.user.realUserStatus }
        return TokenGrant(accessToken: accessToken, refreshToken: refreshToken, claims: claims, signingKey: signingKey, defect: grant.defect)
    }

    /// Why a token could not be encoded.
    static let clockBeyondTokens = "the mock clock is beyond what tokens can carry"

    /// RFC 7636 §4.6: `S256` compares BASE64URL(SHA256(verifier)); `plain` compares as is.
    static func pkceMatches(verifier: String, challenge: String, method: String?) -> Bool {
        guard (43...128).contains(verifier.utf8.count) else { return false }
        switch method {
        case "S256": return Base64URL.encode(SHA256.hash(Array(verifier.utf8))) == challenge
        case "plain": return verifier == challenge
        default: return false
        }
    }

    /// A refresh (§1.3): a new access token (and id_token) while the consent lives; the refresh
    /// token itself is not rotated.
    func refresh(token: String, entry: ClientDirectory.Entry, now: Int64, _ changes: inout WorldChanges) throws(OAuthError) -> TokenGrant {
        guard let payload = codec.decode(token), payload.kind == .refresh else {
            throw .invalidGrant.because("refresh_token unknown: not a refresh token this mock issued")
        }
        guard payload.clientTag == entry.tag else {
            let owner = context.clients.entry(tag: payload.clientTag)?.client.clientID ?? "an unknown client"
            throw .invalidGrant.because("refresh_token issued to another client (issued to \(owner), got \(entry.client.clientID))")
        }
        guard let (key, consent) = self.consent(id: payload.consentID), let account = users[key.userID], !account.deleted else {
            // Revoked by the app: the token itself is dead. Removed by the user: TN3107 says
            // invalid_request (open question 7, a knob).
            switch revoked[payload.consentID] {
            case .byUser?:
                throw OAuthError(context.scenario.compatibility.revokedConsentRefreshError)
                    .because("refresh after the user revoked consent or deleted the account (compatibility.revoked_consent_refresh_error)")
            case .byApp?:
                throw .invalidGrant.because("refresh_token was revoked through POST /auth/revoke")
            case .passwordChanged?:
                throw .invalidGrant.because("refresh_token issued before the user changed their password (password-changed)")
            case nil:
                throw .invalidGrant.because("refresh_token's consent has ended (account deleted or state reset)")
            }
        }
        if let throttle = context.scenario.compatibility.refreshThrottle {
            try countRefresh(RefreshCount.Token(consentID: consent.id, clientID: entry.client.clientID, issuedAt: payload.issuedAt),
                             throttle: throttle, now: now, &changes)
        }
        let accessToken: String
        do {
            accessToken = try encode(.access, consentID: consent.id, client: entry, now: now, &changes)
        } catch {
            throw .invalidRequest.because(Self.clockBeyondTokens)
        }
        changes.emit(.tokensIssued(grantType: "refresh_token", clientID: entry.client.clientID, userID: key.userID, consentID: consent.id))
        // After a refresh: no auth_time, no c_hash, no at_hash (§1.3 [O]).
        let claims = identityClaims(for: entry, user: account.user, scopes: consent.scopes, hideEmail: consent.hideEmail, isFirst: false, now: now)
        return TokenGrant(accessToken: accessToken, refreshToken: nil, claims: claims, signingKey: signingKey)
    }

    /// Counts a refresh of `token` within the mock day of `now` against the knob
    /// `refresh_throttle` (§9), refusing it as the knob says past `perDay`.
    private func countRefresh(_ token: RefreshCount.Token, throttle: RefreshThrottle, now: Int64, _ changes: inout WorldChanges) throws(OAuthError) {
        let day = RefreshCount.day(of: now)
        let before = refreshCounts[token].flatMap { $0.day == day ? $0.count : nil } ?? 0
        guard before < throttle.perDay else {
            throw OAuthError(throttle.error).because(
                "refresh_token refreshed \(before) times on mock day \(RFC3339.format(day * 86_400).prefix(10)) (UTC), the most "
                + "compatibility.refresh_throttle.per_day allows: it works again from \(RFC3339.format((day + 1) * 86_400)) mock time")
        }
        changes.emit(.refreshCounted(RefreshCount(token: token, day: day, count: before + 1)))
    }

    /// A `client_credentials` access token, for team-transfer migration only (§8 [D]).
    func clientCredentials(entry: ClientDirectory.Entry, now: Int64, _ changes: inout WorldChanges) throws(OAuthError) -> String {
        let token: String
        do {
            token = try encode(.access, consentID: 0, client: entry, now: now, &changes)
        } catch {
            throw .invalidRequest.because(Self.clockBeyondTokens)
        }
        changes.emit(.tokensIssued(grantType: "client_credentials", clientID: entry.client.clientID, userID: nil, consentID: 0))
        return token
    }

    /// `/auth/revoke` (§1.4): a token the client owns ends the user's consent for the app group;
    /// unknown tokens, codes and other clients' tokens change nothing.
    func revoke(token: String, entry: ClientDirectory.Entry, now: Int64, _ changes: inout WorldChanges) {
        guard let payload = codec.decode(token), payload.kind != .code, payload.consentID != 0, payload.clientTag == entry.tag,
              let ending = consentEnding(id: payload.consentID, by: .byApp) else { return }
        changes.emit(ending)
        // §1.4 [U]: whether Apple also notifies the app of its own revocation is a knob.
        if context.scenario.compatibility.revokeNotifies, let key = consentKeys[payload.consentID] {
            changes.emit(.accountEvent(accountEventRecord(.consentRevoked, key: key, now: now, changes: &changes)))
        }
    }

    /// The event that ends the live consent with this id; nil when it is already gone.
    func consentEnding(id: UInt32, by who: Consent.Revocation) -> DomainEvent? {
        guard let key = consentKeys[id], consents[key]?.id == id else { return nil }
        return .consentRevoked(userID: key.userID, teamID: key.teamID, groupID: key.groupID, consentID: id, by: who)
    }

    /// The events that end every live consent of `userID` (in `teamID` only, when given), by id.
    func consentEndings(userID: String, teamID: String? = nil, by who: Consent.Revocation) -> [DomainEvent] {
        (consentKeysOfUser[userID] ?? []).filter { teamID == nil || $0.teamID == teamID }.compactMap { consents[$0]?.id }.sorted()
            .compactMap { consentEnding(id: $0, by: who) }
    }

    /// The live access token `token` of a client of `teamID`, or nil.
    func liveAccessToken(_ token: String, teamID: String, now: Int64) -> TokenCodec.Payload? {
        guard let payload = codec.decode(token), payload.kind == .access,
              payload.issuedAt + Int64(context.scenario.lifetimes.accessToken) > now,
              context.clients.entry(tag: payload.clientTag)?.team.teamID == teamID else { return nil }
        if payload.consentID != 0 && consent(id: payload.consentID) == nil { return nil }
        return payload
    }
}

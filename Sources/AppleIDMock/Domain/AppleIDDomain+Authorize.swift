import JOSE

extension AppleIDDomain {
    /// The user's choices on the consent page (or in a headless authorize).
    public struct Approval: Sendable {
        /// Scenario user id.
        public var userID: String
        /// Hide My Email; nil takes the user's own setting.
        public var hideEmail: Bool?
        /// Edited first name; nil keeps the scenario's.
        public var givenName: String?
        /// Edited last name; nil keeps the scenario's.
        public var familyName: String?

        /// Choices for `userID`.
        public init(userID: String, hideEmail: Bool? = nil, givenName: String? = nil, familyName: String? = nil) {
            self.userID = userID
            self.hideEmail = hideEmail
            self.givenName = givenName
            self.familyName = familyName
        }
    }

    /// Validates authorize parameters as Apple does (apple-reference.md §1.2, §2.2). `duplicated`
    /// names parameters that appeared more than once.
    public func validateAuthorize(_ parameters: [String: String], duplicated: [String] = []) throws(AuthorizeError) -> AuthorizeRequest {
        if let name = duplicated.first { throw .unsupported(name) }
        guard let clientID = parameters["client_id"], let entry = clients.entry(clientID), entry.client.kind == .servicesID else {
            throw .clientOrRedirect("client_id")
        }
        guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else { throw .unsupported("redirect_uri") }
        guard entry.client.redirectURIs.contains(redirectURI) else { throw .clientOrRedirect("redirect_uri") }
        let responseTypes = Set((parameters["response_type"] ?? "").split(separator: " ").map(String.init))
        guard responseTypes == ["code"] || responseTypes == ["code", "id_token"] else { throw .unsupported("response_type") }
        let mode = parameters["response_mode"] ?? scenario.compatibility.defaultResponseMode
        guard ["query", "fragment", "form_post"].contains(mode) else { throw .unsupported("response_mode") }
        let scopes = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        guard scopes.allSatisfy({ ["openid", "name", "email"].contains($0) }) else {
            throw AuthorizeError(code: "invalid_scope", message: "Request missing required parameter or unsupported parameters or invalid redirect url",
                                 field: "scope")
        }
        if (scopes.contains("name") || scopes.contains("email")) && mode != "form_post" {
            throw AuthorizeError(code: "invalid_request", message: "response_mode must be form_post when name or email scope is requested.",
                                 field: "response_mode")
        }
        let wantsIDToken = responseTypes.contains("id_token")
        if wantsIDToken && mode == "query" {
            // §1.2 [D]: an id_token needs fragment or form_post. Apple's exact text is unknown.
            throw AuthorizeError(code: "invalid_request", message: "response_mode must be fragment or form_post when id_token is requested.",
                                 field: "response_mode")
        }
        for name in ["state", "nonce"] where (parameters[name]?.utf8.count ?? 0) > AuthorizeRequest.maxStringBytes {
            throw .unsupported(name)
        }
        var method = parameters["code_challenge_method"]
        let challenge = parameters["code_challenge"]
        if let challenge {
            // RFC 7636 §4.2: 43–128 unreserved characters; the method defaults to plain.
            let unreserved = challenge.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || [45, 46, 95, 126].contains(byte)
            }
            guard (43...128).contains(challenge.utf8.count), unreserved else { throw .unsupported("code_challenge") }
            method = method ?? "plain"
            guard method == "S256" || (method == "plain" && scenario.compatibility.pkcePlainAllowed) else {
                throw .unsupported("code_challenge_method")
            }
        } else if method != nil {
            throw .unsupported("code_challenge")
        }
        return AuthorizeRequest(clientID: clientID, redirectURI: redirectURI, wantsIDToken: wantsIDToken, responseMode: mode,
                                scopes: scopes, state: parameters["state"], nonce: parameters["nonce"],
                                codeChallenge: challenge, codeChallengeMethod: challenge == nil ? nil : method)
    }

    /// The user pressed Continue: a code (and id_token when asked), the state, and on the
    /// first authorization of the app group the `user` JSON string (§1.2, §5).
    public func approve(_ request: AuthorizeRequest, _ approval: Approval) throws -> Delivery {
        guard let user = scenario.user(approval.userID) else {
            throw AuthorizeError(code: "invalid_request", message: "no user \"\(approval.userID)\" in the scenario", field: "user")
        }
        guard let entry = clients.entry(request.clientID) else { throw AuthorizeError.clientOrRedirect("client_id") }
        for (field, value) in [("given_name", approval.givenName), ("family_name", approval.familyName)]
        where (value?.utf8.count ?? 0) > AuthorizeRequest.maxStringBytes {
            throw AuthorizeError(code: "invalid_request", message: "at most \(AuthorizeRequest.maxStringBytes) bytes", field: field)
        }
        let now = clock.seconds
        guard codes.hasRoom(now: now) else { throw CapacityError.codes(codes.capacity) }
        let requested = Set(request.scopes).intersection(["name", "email"])
        let (consent, isFirst) = consents.authorize(ConsentStore.Key(teamID: entry.team.teamID, groupID: entry.groupID, userID: user.id),
                                                    scopes: requested, hideEmail: approval.hideEmail ?? user.hideEmail, now: now)
        let code = newCode(consentID: consent.id, clientIndex: entry.index, now: now)
        codes.issue(code, AuthorizationGrant(clientID: request.clientID, redirectURI: request.redirectURI, consentID: consent.id,
                                             teamID: entry.team.teamID, userID: user.id, nonce: request.nonce,
                                             codeChallenge: request.codeChallenge, codeChallengeMethod: request.codeChallengeMethod,
                                             authTime: now, expiresAt: now + Int64(scenario.lifetimes.authorizationCode),
                                             flow: .web, isFirstAuthorization: isFirst), now: now)
        var parameters: [(String, String)] = [("code", code)]
        if request.wantsIDToken {
            var claims = identityClaims(for: entry, user: user, consent: consent, isFirst: isFirst, now: now)
            claims.nonce = request.nonce
            claims.codeHash = IdentityTokenClaims.halfHash(code)
            claims.authTime = now
            parameters.append(("id_token", try sign(claims)))
        }
        if let state = request.state { parameters.append(("state", state)) }
        if isFirst && !requested.isEmpty {
            var userJSON = JSONObject()
            if requested.contains("name") {
                var name = JSONObject()
                name["firstName"] = .string(approval.givenName ?? user.givenName)
                name["lastName"] = .string(approval.familyName ?? user.familyName)
                userJSON["name"] = .object(name)
            }
            if requested.contains("email") { userJSON["email"] = .string(email(for: user, team: entry.team.teamID, hidden: consent.hideEmail)) }
            parameters.append(("user", String(decoding: JSONWriter.compact(.object(userJSON)), as: UTF8.self)))
        }
        return Delivery(responseMode: request.responseMode, redirectURI: request.redirectURI, parameters: parameters)
    }

    /// The user pressed Cancel: `error=user_cancelled_authorize` and the state (§2.2 [D]).
    public func cancel(_ request: AuthorizeRequest) -> Delivery {
        var parameters: [(String, String)] = [("error", "user_cancelled_authorize")]
        if let state = request.state { parameters.append(("state", state)) }
        return Delivery(responseMode: request.responseMode, redirectURI: request.redirectURI, parameters: parameters)
    }

    // MARK: - Shared by the flows

    /// A fresh code in Apple's format: `c<32 hex>.0.<4 letters>.<22 base64url>` (§1.2 [O]),
    /// MAC'd like the tokens so that a used code can be recognised without being stored.
    func newCode(consentID: UInt32, clientIndex: UInt16, now: Int64) -> String {
        tokens.encode(.init(kind: "c", consentID: consentID, clientIndex: clientIndex, issuedAt: UInt32(clamping: now)))
    }

    /// When `code` expires, if this mock issued it; nil for anything else.
    func issuedExpiry(ofCode code: String) -> Int64? {
        guard let payload = tokens.decode(code), payload.kind == "c" else { return nil }
        return Int64(payload.issuedAt) + Int64(scenario.lifetimes.authorizationCode)
    }

    /// The address Apple shows the app: the real one, or the team's relay address (§6).
    func email(for user: Scenario.User, team teamID: String, hidden: Bool) -> String {
        hidden ? Identity.relayAddress(teamID: teamID, userID: user.id) : user.email
    }

    /// Claims common to every id_token for this user and client: identity, email, transfer.
    func identityClaims(for entry: ClientDirectory.Entry, user: Scenario.User, consent: ConsentStore.Consent, isFirst: Bool, now: Int64) -> IdentityTokenClaims {
        var claims = IdentityTokenClaims(issuer: issuer, audience: entry.client.clientID,
                                         subject: Identity.subject(teamID: entry.team.teamID, userID: user.id),
                                         issuedAt: now, expiresAt: now + Int64(scenario.lifetimes.idToken))
        if consent.scopes.contains("email") && (isFirst || scenario.compatibility.emailOnLaterLogins) {
            claims.email = email(for: user, team: entry.team.teamID, hidden: consent.hideEmail)
        }
        if let transfer = transfers.transfer(userID: user.id, toTeam: entry.team.teamID, now: now, window: Int64(scenario.lifetimes.transferWindow)) {
            claims.transferSubject = transfer.transferSubject
        }
        return claims
    }

    /// Signs claims with the active key.
    func sign(_ claims: IdentityTokenClaims) throws(JOSEError) -> String {
        try keyRing.sign(claims: claims.json(scenario.compatibility))
    }
}

import JOSE

extension AppleIDDomain {
    /// The user's choices on the consent page (or in a headless authorize).
    struct Approval: Sendable {
        /// Scenario user id.
        var userID: String
        /// Hide My Email; nil takes the user's own setting.
        package var hideEmail: Bool?
        /// Edited first name; nil keeps the scenario's.
        var givenName: String?
        /// Edited last name; nil keeps the scenario's.
        var familyName: String?
        /// What the delivered id_token, and the one the code is exchanged for, get wrong (headless authorize only).
        var defect: TokenDefect?

        /// Choices for `userID`.
        init(userID: String, hideEmail: Bool? = nil, givenName: String? = nil, familyName: String? = nil, defect: TokenDefect? = nil) {
            self.userID = userID
            self.defect = defect
            self.hideEmail = hideEmail
            self.givenName = givenName
            self.familyName = familyName
        }
    }

    /// Validates authorize parameters as Apple does (apple-behaviour.md §1.2, §2.2). `duplicated`
    /// names parameters that appeared more than once.
    func validateAuthorize(_ parameters: [String: String], duplicated: [String] = []) throws(AuthorizeError) -> AuthorizeRequest {
        do {
            return try checkAuthorize(parameters, duplicated: duplicated)
        } catch {
            throw error.rendered(scenario.compatibility)
        }
    }

    private func checkAuthorize(_ parameters: [String: String], duplicated: [String]) throws(AuthorizeError) -> AuthorizeRequest {
        if let name = duplicated.first { throw .unsupported(name, "parameter \(LogText.clip(name)) repeated") }
        guard let clientID = parameters["client_id"] else { throw .clientOrRedirect("client_id", "client_id missing") }
        guard let entry = clients.entry(clientID) else {
            throw .unknownClient("client_id \(LogText.clip(clientID)) is not a client in the scenario")
        }
        guard entry.client.kind == .servicesID else {
            throw .clientOrRedirect("client_id", "client_id \(clientID) is an App ID; web sign-in needs a Services ID")
        }
        if entry.client.propagationSeconds > 0 {
            // A new Services ID shows Apple's invalid_client page until it propagates (§3 [O]).
            let seconds = Int64(entry.client.propagationSeconds)
            let (now, start) = owner.read { world, now in (now, world.start) }
            if now < start &+ seconds {
                throw .unknownClient(ClientSecretVerifier.propagating("client_id \(clientID)", seconds: seconds, now: now, start: start))
            }
        }
        guard let redirectURI = parameters["redirect_uri"], !redirectURI.isEmpty else { throw .unsupported("redirect_uri", "redirect_uri missing") }
        guard entry.client.redirectURIs.contains(redirectURI) else {
            throw .clientOrRedirect("redirect_uri", "redirect_uri \(LogText.clip(redirectURI)) is not registered for \(clientID)"
                + " (registered: \(LogText.clip(entry.client.redirectURIs.joined(separator: " "))))")
        }
        if scenario.compatibility.strictRedirectURIs, let rule = ScenarioRules.strictRedirectURI(redirectURI) {
            // Apple's return-URL rules hold per request too (https, a domain name, no fragment).
            throw AuthorizeError(code: "invalid_request", message: "Invalid web redirect url.", field: "redirect_uri", jsonCode: "unauthorized_client",
                                 reason: "redirect_uri \(LogText.clip(redirectURI)): \(rule)")
        }
        let responseTypes = Set((parameters["response_type"] ?? "").split(separator: " ").map(String.init))
        guard responseTypes == ["code"] || responseTypes == ["code", "id_token"] else {
            throw .unsupported("response_type", "response_type \(Self.shown(parameters["response_type"])) is not \"code\" or \"code id_token\"")
        }
        let modeName = parameters["response_mode"] ?? scenario.compatibility.defaultResponseMode
        guard let mode = ResponseMode(rawValue: modeName) else {
            throw .unsupported("response_mode", "response_mode \(LogText.clip(modeName)) is not query, fragment, form_post or web_message")
        }
        let scopes = (parameters["scope"] ?? "").split(separator: " ").map(String.init)
        if let unknown = scopes.first(where: { !["openid", "name", "email"].contains($0) }) {
            throw AuthorizeError(code: "invalid_scope", message: "Request missing required parameter or unsupported parameters or invalid redirect url",
                                 field: "scope", reason: "scope \(LogText.clip(unknown)) is not openid, name or email")
        }
        if (scopes.contains("name") || scopes.contains("email")) && !mode.carriesUser {
            // Apple's text names form_post only; Sign in with Apple JS's web_message popup takes scopes too.
            throw AuthorizeError(code: "invalid_request", message: "response_mode must be form_post when name or email scope is requested.",
                                 field: "response_mode", reason: "scope name or email needs response_mode form_post or web_message, got \(modeName)")
        }
        let wantsIDToken = responseTypes.contains("id_token")
        if wantsIDToken && !mode.carriesIDToken {
            // §1.2 [D]: an id_token needs fragment or form_post. Apple's exact text is unknown.
            throw AuthorizeError(code: "invalid_request", message: "response_mode must be fragment or form_post when id_token is requested.",
                                 field: "response_mode", reason: "response_type id_token needs response_mode fragment, form_post or web_message, got query")
        }
        for name in ["state", "nonce"] {
            if let size = parameters[name]?.utf8.count, size > AuthorizeRequest.maxStringBytes {
                throw .unsupported(name, "\(name) is \(size) bytes; the mock takes at most \(AuthorizeRequest.maxStringBytes)")
            }
        }
        var method = parameters["code_challenge_method"]
        let challenge = parameters["code_challenge"]
        if let challenge {
            // RFC 7636 §4.2: 43–128 unreserved characters; the method defaults to plain.
            let unreserved = challenge.utf8.allSatisfy { byte in
                (48...57).contains(byte) || (65...90).contains(byte) || (97...122).contains(byte) || [45, 46, 95, 126].contains(byte)
            }
            guard (43...128).contains(challenge.utf8.count), unreserved else {
                throw .unsupported("code_challenge", "code_challenge must be 43 to 128 unreserved characters (RFC 7636), got \(challenge.utf8.count) bytes")
            }
            method = method ?? "plain"
            guard method == "S256" || (method == "plain" && scenario.compatibility.pkcePlainAllowed) else {
                let allowed = scenario.compatibility.pkcePlainAllowed ? "S256 or plain" : "S256 (compatibility.pkce_plain_allowed is false)"
                throw .unsupported("code_challenge_method", "code_challenge_method \(Self.shown(method)) is not \(allowed)")
            }
        } else if method != nil {
            throw .unsupported("code_challenge", "code_challenge_method without code_challenge")
        }
        return AuthorizeRequest(clientID: clientID, redirectURI: redirectURI, wantsIDToken: wantsIDToken, responseMode: mode,
                                scopes: scopes, state: parameters["state"], nonce: parameters["nonce"],
                                codeChallenge: challenge, codeChallengeMethod: challenge == nil ? nil : method)
    }

    /// The user pressed Continue: a code (and id_token when asked), the state, and on the
    /// first authorization of the app group the `user` JSON string (§1.2, §5).
    func approve(_ request: AuthorizeRequest, _ approval: Approval) throws -> Delivery {
        for (field, value) in [("given_name", approval.givenName), ("family_name", approval.familyName)]
        where (value?.utf8.count ?? 0) > AuthorizeRequest.maxStringBytes {
            throw AuthorizeError(code: "invalid_request", message: "at most \(AuthorizeRequest.maxStringBytes) bytes", field: field,
                                 reason: "\(field) is over \(AuthorizeRequest.maxStringBytes) bytes").rendered(scenario.compatibility)
        }
        let requested = Set(request.scopes).intersection(["name", "email"])
        let grant = GrantRequest(flow: .web, userID: approval.userID, clientID: request.clientID, scopes: requested, hideEmail: approval.hideEmail,
                                 nonce: request.nonce, redirectURI: request.redirectURI, codeChallenge: request.codeChallenge,
                                 codeChallengeMethod: request.codeChallengeMethod, defect: approval.defect)
        let result: GrantResult
        do {
            result = try owner.perform { world, now, changes throws(GrantError) in try world.grant(grant, now: now, &changes) }.0
        } catch {
            throw authorizeError(error)
        }
        guard let code = result.code else {
            throw AuthorizeError.clientOrRedirect("client_id", "no code was issued for \(request.clientID)").rendered(scenario.compatibility)
        }
        var parameters: [(String, String)] = [("code", code)]
        if request.wantsIDToken { parameters.append(("id_token", try sign(result.claims, with: result.signingKey, defect: approval.defect))) }
        if let state = request.state { parameters.append(("state", state)) }
        var user: JSONObject?
        if result.isFirst && !requested.isEmpty {
            var name: JSONValue?
            if requested.contains("name") {
                name = .object(["firstName": .string(approval.givenName ?? result.user.givenName),
                                "lastName": .string(approval.familyName ?? result.user.familyName)])
            }
            var email: JSONValue?
            // A managed account without an email gives none (§4 [D]).
            if requested.contains("email") && !result.user.managed {
                email = .string(result.hideEmail ? Identity.relayAddress(teamID: result.entry.team.teamID, user: result.user) : result.user.email)
            }
            // form_post's string has name first (observed); Sign in with Apple JS's object, email first (§5).
            let parts = request.responseMode == .webMessage ? [("email", email), ("name", name)] : [("name", name), ("email", email)]
            let userJSON = JSONObject(parts.compactMap { key, value in value.map { (key, $0) } })
            if userJSON.isEmpty {
                // Nothing to share: no user JSON.
            } else if request.responseMode == .webMessage {
                user = userJSON
            } else {
                parameters.append(("user", String(decoding: JSONWriter.compact(.object(userJSON)), as: UTF8.self)))
            }
        }
        return Delivery(responseMode: request.responseMode, redirectURI: request.redirectURI, parameters: parameters, user: user)
    }

    /// A refused grant in `/auth/authorize`'s words.
    private func authorizeError(_ error: GrantError) -> AuthorizeError {
        switch error {
        case .unknownUser(let userID):
            return AuthorizeError(code: "invalid_request", message: "no user \"\(userID)\" in the scenario", field: "user",
                                  reason: "no user \(LogText.clip(userID)) in the scenario").rendered(scenario.compatibility)
        case .accountDeleted(let userID):
            return AuthorizeError(code: "invalid_request", message: "the Apple Account of \"\(userID)\" was deleted", field: "user",
                                  reason: "the Apple Account of \(LogText.clip(userID)) was deleted").rendered(scenario.compatibility)
        case .unknownClient(let clientID):
            return AuthorizeError.unknownClient("client_id \(LogText.clip(clientID)) is not a client in the scenario")
                .rendered(scenario.compatibility)
        case .capacity(let full):
            var refusal = AuthorizeError(code: "temporarily_unavailable", message: full.message, field: "code", reason: full.message)
            refusal.rendering = .unavailable
            return refusal
        case .timeOutOfRange:
            var refusal = AuthorizeError(code: "temporarily_unavailable", message: World.clockBeyondTokens, field: "code",
                                         reason: World.clockBeyondTokens)
            refusal.rendering = .unavailable
            return refusal
        }
    }

    /// A parameter's value for a reason, or `missing`.
    private static func shown(_ value: String?) -> String {
        value.map { "\"\(LogText.clip($0))\"" } ?? "missing"
    }

    /// The user pressed Cancel: `error=user_cancelled_authorize` and the state (§2.2 [D]).
    package func cancel(_ request: AuthorizeRequest) -> Delivery {
        var parameters: [(String, String)] = [("error", "user_cancelled_authorize")]
        if let state = request.state { parameters.append(("state", state)) }
        return Delivery(responseMode: request.responseMode, redirectURI: request.redirectURI, parameters: parameters)
    }
}

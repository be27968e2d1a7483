import JOSE

extension AppleIDDomain {
    /// What `ASAuthorizationAppleIDCredential` hands an app after a native sign-in.
    public struct NativeCredential: Sendable, Equatable {
        /// `user`: the team-scoped `sub`.
        public var user: String
        /// `identityToken`: an id_token with `c_hash` of the code.
        public var identityToken: String
        /// `authorizationCode`: redeemable at `/auth/token` with the bundle id and no redirect_uri.
        public var authorizationCode: String
        /// `email`: first authorization only.
        public var email: String?
        /// `fullName`: first authorization only, when `name` was requested.
        public var fullName: (givenName: String, familyName: String)?
        /// `realUserStatus`: 0 Unsupported, 1 Unknown, 2 LikelyReal; only meaningful the first time.
        public var realUserStatus: Int

        /// Field-wise equality.
        public static func == (lhs: NativeCredential, rhs: NativeCredential) -> Bool {
            lhs.user == rhs.user && lhs.identityToken == rhs.identityToken && lhs.authorizationCode == rhs.authorizationCode
                && lhs.email == rhs.email && lhs.fullName?.givenName == rhs.fullName?.givenName
                && lhs.fullName?.familyName == rhs.fullName?.familyName && lhs.realUserStatus == rhs.realUserStatus
        }
    }

    /// Why a native sign-in request was refused: a message and the field at fault.
    public struct NativeSignInError: Error, Equatable, Sendable {
        /// What is wrong.
        public var message: String
        /// The request field at fault.
        public var field: String
    }

    /// Signs `userID` into the app `clientID` as an iOS device would (apple-reference.md §4, §5).
    public func nativeSignIn(userID: String, clientID: String, scopes: [String], nonce: String?, hideEmail: Bool?) throws -> NativeCredential {
        guard let user = scenario.user(userID) else { throw NativeSignInError(message: "no user \"\(userID)\" in the scenario", field: "user") }
        guard let entry = clients.entry(clientID) else { throw NativeSignInError(message: "no client \"\(clientID)\" in the scenario", field: "client_id") }
        guard entry.client.kind == .appID else {
            throw NativeSignInError(message: "native sign-in needs an App ID (bundle id); \"\(clientID)\" is a Services ID", field: "client_id")
        }
        for scope in scopes where scope != "name" && scope != "email" {
            throw NativeSignInError(message: "unknown scope \"\(scope)\" (expected name, email)", field: "scopes")
        }
        if let nonce, nonce.utf8.count > AuthorizeRequest.maxStringBytes {
            throw NativeSignInError(message: "expected at most \(AuthorizeRequest.maxStringBytes) bytes", field: "nonce")
        }
        let now = clock.seconds
        guard codes.hasRoom(now: now) else { throw CapacityError.codes(codes.capacity) }
        let requested = Set(scopes)
        let (consent, isFirst) = consents.authorize(ConsentStore.Key(teamID: entry.team.teamID, groupID: entry.groupID, userID: user.id),
                                                    scopes: requested, hideEmail: hideEmail ?? user.hideEmail, now: now)
        let code = newCode(consentID: consent.id, clientIndex: entry.index, now: now)
        codes.issue(code, AuthorizationGrant(clientID: clientID, redirectURI: nil, consentID: consent.id, teamID: entry.team.teamID,
                                             userID: user.id, nonce: nonce, codeChallenge: nil, codeChallengeMethod: nil, authTime: now,
                                             expiresAt: now + Int64(scenario.lifetimes.authorizationCode), flow: .native,
                                             isFirstAuthorization: isFirst), now: now)
        var claims = identityClaims(for: entry, user: user, consent: consent, isFirst: isFirst, now: now)
        claims.nonce = nonce
        claims.codeHash = IdentityTokenClaims.halfHash(code)
        claims.authTime = now
        if isFirst { claims.realUserStatus = user.realUserStatus }
        let email = isFirst && consent.scopes.contains("email") ? self.email(for: user, team: entry.team.teamID, hidden: consent.hideEmail) : nil
        let fullName = isFirst && consent.scopes.contains("name") ? (user.givenName, user.familyName) : nil
        return NativeCredential(user: claims.subject, identityToken: try sign(claims), authorizationCode: code, email: email,
                                fullName: fullName, realUserStatus: isFirst ? user.realUserStatus : 0)
    }
}

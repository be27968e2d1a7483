import JOSE

extension AppleIDDomain {
    /// What `ASAuthorizationAppleIDCredential` hands an app after a native sign-in.
    package struct NativeCredential: Sendable, Equatable {
        /// `user`: the team-scoped `sub`.
        package var user: String
        /// `identityToken`: an id_token with `c_hash` of the code.
        package var identityToken: String
        /// `authorizationCode`: redeemable at `/auth/token` with the bundle id and no redirect_uri.
        package var authorizationCode: String
        /// `email`: first authorization only.
        package var email: String?
        /// `fullName`: first authorization only, when `name` was requested.
        package var fullName: (givenName: String, familyName: String)?
        /// `realUserStatus`: 0 Unsupported, 1 Unknown, 2 LikelyReal; only meaningful the first time.
        package var realUserStatus: Int

        /// Field-wise equality.
        package static func == (lhs: NativeCredential, rhs: NativeCredential) -> Bool {
            lhs.user == rhs.user && lhs.identityToken == rhs.identityToken && lhs.authorizationCode == rhs.authorizationCode
                && lhs.email == rhs.email && lhs.fullName?.givenName == rhs.fullName?.givenName
                && lhs.fullName?.familyName == rhs.fullName?.familyName && lhs.realUserStatus == rhs.realUserStatus
        }
    }

    /// Why a native sign-in request was refused: a message and the field at fault.
    package struct NativeSignInError: Error, Equatable, Sendable {
        /// What is wrong.
        package var message: String
        /// The request field at fault.
        package var field: String
    }

    /// Signs `userID` into the app `clientID` as an iOS device would (apple-reference.md §4, §5).
    /// `defect` spoils the identity token, and the one the code is exchanged for.
    package func nativeSignIn(userID: String, clientID: String, scopes: [String], nonce: String?, hideEmail: Bool?,
                             defect: TokenDefect? = nil) throws -> NativeCredential {
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
        let request = GrantRequest(flow: .native, userID: userID, clientID: clientID, scopes: Set(scopes), hideEmail: hideEmail, nonce: nonce,
                                   defect: defect)
        let result: GrantResult
        do {
            result = try owner.perform { world, now, changes throws(GrantError) in try world.grant(request, now: now, &changes) }.0
        } catch {
            throw Self.nativeError(error)
        }
        let email = result.isFirst && result.consentScopes.contains("email")
            ? (result.hideEmail ? Identity.relayAddress(teamID: entry.team.teamID, user: result.user) : result.user.email) : nil
        let fullName = result.isFirst && result.consentScopes.contains("name") ? (result.user.givenName, result.user.familyName) : nil
        return NativeCredential(user: result.claims.subject, identityToken: try sign(result.claims, with: result.signingKey, defect: defect),
                                authorizationCode: result.code ?? "", email: email, fullName: fullName,
                                realUserStatus: result.isFirst ? result.user.realUserStatus : 0)
    }

    /// An id_token for `userID` at `clientID` as a sign-in would give it now, changing nothing:
    /// the same claims path as every grant (transfer included); no code, no consent.
    package func identityToken(userID: String, clientID: String, nonce: String?, hideEmail: Bool?) throws -> (token: String, claims: IdentityTokenClaims) {
        let request = GrantRequest(flow: .web, userID: userID, clientID: clientID, scopes: ["email"], hideEmail: hideEmail, nonce: nonce, issuesCode: false)
        let result: GrantResult
        do {
            result = try owner.perform { world, now, changes throws(GrantError) in try world.grant(request, now: now, &changes) }.0
        } catch {
            throw Self.nativeError(error)
        }
        return (try sign(result.claims, with: result.signingKey), result.claims)
    }

    /// A refused grant in the control API's words.
    static func nativeError(_ error: GrantError) -> any Error {
        switch error {
        case .unknownUser(let userID): NativeSignInError(message: "no user \"\(userID)\" in the scenario", field: "user")
        case .accountDeleted(let userID): NativeSignInError(message: "the Apple Account of \"\(userID)\" was deleted", field: "user")
        case .unknownClient(let clientID): NativeSignInError(message: "no client \"\(clientID)\" in the scenario", field: "client_id")
        case .capacity(let full): full
        case .timeOutOfRange: CapacityError(message: "the mock clock is beyond what tokens can carry")
        }
    }
}

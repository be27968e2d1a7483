import JOSE

extension AppleIDDomain {
    /// What `ASAuthorizationAppleIDCredential` hands an app after a native sign-in.
    package struct NativeCredential: Sendable, Equatable {
        /// `user`: the team-scoped `sub`.
        package var user: String
        /// `identityToken`: an id_token with `c_hash` of the code.
        var identityToken: String
        /// `authorizationCode`: redeemable at `/auth/token` with the bundle id and no redirect_uri.
        package var authorizationCode: String
        /// `email`: first authorization only.
        package var email: String?
        /// `fullName`: first authorization only, when `name` was requested.
        var fullName: (givenName: String, familyName: String)?
        /// `realUserStatus`: 0 Unsupported, 1 Unknown, 2 LikelyReal; only meaningful the first time.
        var realUserStatus: Int

        /// Field-wise equality.
        package static func == (lhs: NativeCredential, rhs: NativeCredential) -> Bool {
            lhs.user == rhs.user && lhs.identityToken == rhs.identityToken && lhs.authorizationCode == rhs.authorizationCode
                && lhs.email == rhs.email && lhs.fullName?.givenName == rhs.fullName?.givenName
                && lhs.fullName?.familyName == rhs.fullName?.familyName && lhs.realUserStatus == rhs.realUserStatus
        }
    }

    /// Why a sign-in made outside `/auth/authorize` (native, or a minted id_token) was refused.
    package enum SignInRefusal: Error, Equatable, Sendable {
        /// The request names what the scenario lacks or asks what Apple refuses: the field at
        /// fault and what is wrong.
        case invalid(field: String, message: String)
        /// The mock is full (its codes, or its clock beyond what tokens carry).
        case full(CapacityError)
        /// The token could not be signed: the mock's own fault.
        case signing(String)
    }

    /// Signs `userID` into the app `clientID` as an iOS device would (apple-behaviour.md §4, §5).
    /// `defect` spoils the identity token, and the one the code is exchanged for.
    package func nativeSignIn(userID: String, clientID: String, scopes: [String], nonce: String?, hideEmail: Bool?,
                             defect: TokenDefect? = nil) throws(SignInRefusal) -> NativeCredential {
        guard let entry = clients.entry(clientID) else { throw .invalid(field: "client_id", message: "no client \"\(clientID)\" in the scenario") }
        guard entry.client.kind == .appID else {
            throw .invalid(field: "client_id", message: "native sign-in needs an App ID (bundle id); \"\(clientID)\" is a Services ID")
        }
        for scope in scopes where scope != "name" && scope != "email" {
            throw .invalid(field: "scopes", message: "unknown scope \"\(scope)\" (expected name, email)")
        }
        if let nonce, nonce.utf8.count > AuthorizeRequest.maxStringBytes {
            throw .invalid(field: "nonce", message: "expected at most \(AuthorizeRequest.maxStringBytes) bytes")
        }
        let request = GrantRequest(flow: .native, userID: userID, clientID: clientID, scopes: Set(scopes), hideEmail: hideEmail, nonce: nonce,
                                   defect: defect)
        let result: GrantResult
        do {
            result = try owner.perform { world, now, changes throws(GrantError) in try world.grant(request, now: now, &changes) }.0
        } catch {
            throw Self.nativeError(error)
        }
        let email = result.isFirst && result.consentScopes.contains("email") && !result.user.managed
            ? (result.hideEmail ? Identity.relayAddress(teamID: entry.team.teamID, user: result.user) : result.user.email) : nil
        let fullName = result.isFirst && result.consentScopes.contains("name") ? (result.user.givenName, result.user.familyName) : nil
        let token: String
        do {
            token = try sign(result.claims, with: result.signingKey, defect: defect)
        } catch {
            throw .signing("\(error)")
        }
        return NativeCredential(user: result.claims.subject, identityToken: token, authorizationCode: result.code ?? "", email: email,
                                fullName: fullName, realUserStatus: result.isFirst ? result.user.realUserStatus : 0)
    }

    /// An id_token for `userID` at `clientID` as a sign-in would give it now, changing nothing:
    /// the same claims path as every grant (transfer included); no code, no consent.
    func identityToken(userID: String, clientID: String, nonce: String?, hideEmail: Bool?) throws(SignInRefusal) -> (token: String, claims: IdentityTokenClaims) {
        let request = GrantRequest(flow: .web, userID: userID, clientID: clientID, scopes: ["email"], hideEmail: hideEmail, nonce: nonce, issuesCode: false)
        let result: GrantResult
        do {
            result = try owner.perform { world, now, changes throws(GrantError) in try world.grant(request, now: now, &changes) }.0
        } catch {
            throw Self.nativeError(error)
        }
        do {
            return (try sign(result.claims, with: result.signingKey), result.claims)
        } catch {
            throw .signing("\(error)")
        }
    }

    /// A refused grant, as a sign-in refusal.
    static func nativeError(_ error: GrantError) -> SignInRefusal {
        switch error {
        case .unknownUser(let userID): .invalid(field: "user", message: "no user \"\(userID)\" in the scenario")
        case .accountDeleted(let userID): .invalid(field: "user", message: "the Apple Account of \"\(userID)\" was deleted")
        case .unknownClient(let clientID): .invalid(field: "client_id", message: "no client \"\(clientID)\" in the scenario")
        case .capacity(let full): .full(full)
        case .timeOutOfRange: .full(CapacityError(message: "the mock clock is beyond what tokens can carry"))
        }
    }
}

@testable import AppleIDMock
import Foundation
import JOSE
import Synchronization
import XCTest

/// Every public operation of `AppleIDDomain`, called directly: no socket, no HTTP types
/// (house style rule 12, the pure level). Each accepted input has a refused twin, and each
/// operation that changes the state is checked for the events it reports.
final class DomainOperationTests: XCTestCase {
    private static let teamB = "MOCKTEAM02"
    private static let teamBKeyID = "MOCKKEY002"
    private static let teamBApp = "com.teamb.app"
    private static let initialKeys = ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"]
    private let teamBKey = try! P256PrivateKey.generate()

    // MARK: - Factories (everything defaulted, rule 13)

    /// A domain over the built-in scenario, keys from Keys/signing, clock frozen at `frozenNow`.
    private func makeDomain(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> AppleIDDomain {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        adjust(&configuration)
        return try AppleIDDomain(configuration: configuration)
    }

    /// A domain whose scenario has a second team with one App ID.
    private func makeTwoTeamDomain() throws -> AppleIDDomain {
        let pem = try teamBKey.publicKey.pem
        return try makeDomain { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: Self.teamBKeyID, publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: Self.teamBApp, kind: .appID)]))
        }
    }

    /// A client_secret of the default team issued at mock now.
    private func secret(_ domain: AppleIDDomain, _ clientID: String = "com.example.web", issuedAt: Int64? = nil) throws -> String {
        try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: clientID, privateKey: mockDeveloperKey,
                              issuedAt: issuedAt ?? domain.now, lifetime: 3600)
    }

    /// Validated web authorize parameters for the default Services ID.
    private func webRequest(_ domain: AppleIDDomain, scope: String = "name email") throws -> AuthorizeRequest {
        try domain.validateAuthorize(["client_id": "com.example.web", "redirect_uri": webRedirect, "response_type": "code",
                                      "response_mode": "form_post", "scope": scope, "state": "st-1", "nonce": "n-1"])
    }

    /// A web sign-in: the delivered parameters by name.
    private func approve(_ domain: AppleIDDomain, user: String = "alice") throws -> [String: String] {
        let delivery = try domain.approve(try webRequest(domain), AppleIDDomain.Approval(userID: user))
        return Dictionary(delivery.parameters, uniquingKeysWith: { first, _ in first })
    }

    /// `grant_type=authorization_code` for the web client.
    private func redeem(_ domain: AppleIDDomain, _ code: String) throws -> JSONObject {
        try domain.token(form: ["client_id": "com.example.web", "client_secret": try secret(domain), "grant_type": "authorization_code",
                          "code": code, "redirect_uri": webRedirect])
    }

    /// `grant_type=refresh_token` for the web client.
    private func refresh(_ domain: AppleIDDomain, _ token: String) throws -> JSONObject {
        try domain.token(form: ["client_id": "com.example.web", "client_secret": try secret(domain), "grant_type": "refresh_token", "refresh_token": token])
    }

    /// A native sign-in at the default App ID.
    @discardableResult
    private func nativeSignIn(_ domain: AppleIDDomain, user: String = "alice", clientID: String = "com.example.app") throws -> AppleIDDomain.NativeCredential {
        try domain.nativeSignIn(userID: user, clientID: clientID, scopes: ["name", "email"], nonce: "native-nonce", hideEmail: nil)
    }

    /// The events `body` caused.
    private func events(of domain: AppleIDDomain, _ body: () throws -> Void) rethrows -> [DomainEvent] {
        let before = domain.lastEventSequence
        try body()
        return domain.recordedEvents(after: before).map(\.event)
    }

    /// The events `body` caused, for the operations that suspend (key generation, clock moves).
    private func events(of domain: AppleIDDomain, _ body: () async throws -> Void) async rethrows -> [DomainEvent] {
        let before = domain.lastEventSequence
        try await body()
        return domain.recordedEvents(after: before).map(\.event)
    }

    /// Each event's name and whom or what it is about, for short assertions.
    private func summary(_ events: [DomainEvent]) -> [String] {
        events.map { event in
            let about: String? = switch event {
            case .keyPublished(let key, _, _): key.keyID
            case .keyActivated(let kid, _), .keyRetired(let kid, _, _): kid
            case .userAdded(let added): added.user.id
            case .consentGranted(let grant): grant.userID
            case .consentRevoked(let userID, _, _, _, let who): "\(userID) by \(who.rawValue)"
            case .clockChanged(let clock, let now): "\(now)\(clock.isFrozen ? " frozen" : "")"
            case .tokensIssued(let grantType, _, _, _): grantType
            case .transferStarted(let record): "\(record.userID) \(record.fromTeam)→\(record.toTeam)"
            default: nil
            }
            return about.map { "\(event.name) \($0)" } ?? event.name
        }
    }

    /// Verifies an id_token under the published key its `kid` names; returns the claims.
    private func verifiedClaims(_ domain: AppleIDDomain, _ token: String?, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        let jws = try CompactJWS.parse(try XCTUnwrap(token, file: file, line: line))
        let key = try XCTUnwrap(domain.publicKey(keyID: try XCTUnwrap(jws.keyID, file: file, line: line)), "kid not published", file: file, line: line)
        XCTAssertTrue(jws.verifyRS256(with: key), file: file, line: line)
        return try XCTUnwrap(jws.payloadJSON, file: file, line: line)
    }

    /// A user nobody has seen: first authorization never leaks between tests.
    private func freshUser(_ id: String = "dora") -> Scenario.User {
        Scenario.User(id: id, email: "\(id)@example.com", givenName: "Dora", familyName: "Doe")
    }

    // MARK: - Authorize

    func testValidateAuthorize_ReturnsTheRequest_AndRefusesAnUnregisteredRedirect() throws {
        let domain = try makeDomain()
        let request = try webRequest(domain)
        XCTAssertEqual(request.clientID, "com.example.web")
        XCTAssertEqual(request.redirectURI, webRedirect)
        XCTAssertEqual(request.responseMode, .formPost)
        XCTAssertEqual(request.scopes, ["name", "email"])
        XCTAssertEqual(request.state, "st-1")
        XCTAssertEqual(request.nonce, "n-1")
        let refused = try XCTUnwrap(assertThrows(try domain.validateAuthorize(
            ["client_id": "com.example.web", "redirect_uri": "https://evil.example/callback", "response_type": "code"])) as? AuthorizeError)
        XCTAssertEqual(refused.code, "invalid_request")
        XCTAssertEqual(refused.message, "Invalid client id or web redirect url.")
        XCTAssertEqual(refused.field, "redirect_uri")
    }

    func testApprove_GivesUserJSONOnFirstAuthorizationOnly_AndReportsConsentGranted() throws {
        let domain = try makeDomain()
        var first: [String: String] = [:]
        let granted = try events(of: domain) { first = try approve(domain) }
        XCTAssertTrue(matches(first["code"], codePattern), "\(first)")
        XCTAssertEqual(first["state"], "st-1")
        XCTAssertEqual(first["user"], #"{"name":{"firstName":"Alice","lastName":"Appleseed"},"email":"alice@example.com"}"#)
        XCTAssertEqual(summary(granted), ["consent-granted alice", "code-issued"])
        guard case .consentGranted(let grant)? = granted.first, grant.teamID == "MOCKTEAM01", grant.scopes == ["name", "email"],
              !grant.hideEmail, grant.relayAddress == nil, grant.at == frozenNow else {
            return XCTFail("expected consentGranted for alice with what she agreed to, got \(granted)")
        }
        var second: [String: String] = [:]
        let again = try events(of: domain) { second = try approve(domain) }
        XCTAssertTrue(matches(second["code"], codePattern))
        XCTAssertNil(second["user"])
        XCTAssertEqual(summary(again), ["code-issued"])
        XCTAssertEqual(domain.consentCount, 1)
        XCTAssertEqual(domain.pendingCodeCount, 2)
    }

    func testApprove_RefusesAnUnknownUser_WithoutConsentOrCode() throws {
        let domain = try makeDomain()
        let refused = try XCTUnwrap(assertThrows(try approve(domain, user: "zed")) as? AuthorizeError)
        XCTAssertEqual(refused.field, "user")
        XCTAssertEqual(refused.message, "no user \"zed\" in the scenario")
        XCTAssertEqual(domain.consentCount, 0)
        XCTAssertEqual(domain.pendingCodeCount, 0)
        XCTAssertEqual(domain.recordedEvents(), [])
    }

    // MARK: - Native sign-in and minted id_tokens

    func testNativeSignIn_FirstTimeGivesNameEmailAndStatus_SecondTimeNone() throws {
        let domain = try makeDomain()
        let first = try nativeSignIn(domain)
        XCTAssertEqual(first.user, teamSub("alice"))
        XCTAssertEqual(first.email, "alice@example.com")
        XCTAssertEqual(first.fullName?.givenName, "Alice")
        XCTAssertEqual(first.fullName?.familyName, "Appleseed")
        XCTAssertEqual(first.realUserStatus, 2)
        XCTAssertTrue(matches(first.authorizationCode, codePattern))
        let claims = try verifiedClaims(domain, first.identityToken)
        XCTAssertEqual(claims["sub"], .string(teamSub("alice")))
        XCTAssertEqual(claims["aud"], "com.example.app")
        XCTAssertEqual(claims["iat"], .int(frozenNow))
        XCTAssertEqual(claims["nonce"], "native-nonce")
        let second = try nativeSignIn(domain)
        XCTAssertEqual(second.user, first.user)
        XCTAssertNil(second.email)
        XCTAssertNil(second.fullName)
        XCTAssertEqual(second.realUserStatus, 0)
    }

    func testNativeSignIn_RefusesAServicesIDAndAnUnknownScope() throws {
        let domain = try makeDomain()
        let servicesID = assertThrows(try nativeSignIn(domain, clientID: "com.example.web")) as? AppleIDDomain.SignInRefusal
        XCTAssertEqual(servicesID, .invalid(field: "client_id", message: "native sign-in needs an App ID (bundle id); \"com.example.web\" is a Services ID"))
        let scope = assertThrows(try domain.nativeSignIn(userID: "alice", clientID: "com.example.app", scopes: ["phone"],
                                                         nonce: nil, hideEmail: nil)) as? AppleIDDomain.SignInRefusal
        XCTAssertEqual(scope, .invalid(field: "scopes", message: "unknown scope \"phone\" (expected name, email)"))
        XCTAssertEqual(domain.consentCount, 0)
    }

    func testIdentityToken_HasTheSignInsSub_AndChangesNothing() throws {
        let domain = try makeDomain()
        let signIn = try nativeSignIn(domain)
        let consents = domain.consentCount
        let codes = domain.pendingCodeCount
        var minted: (token: String, claims: IdentityTokenClaims)?
        let caused = try events(of: domain) {
            minted = try domain.identityToken(userID: "alice", clientID: "com.example.app", nonce: "m-1", hideEmail: nil)
        }
        let token = try XCTUnwrap(minted)
        XCTAssertEqual(token.claims.subject, signIn.user)
        XCTAssertNil(token.claims.transferSubject)
        let claims = try verifiedClaims(domain, token.token)
        XCTAssertEqual(claims["sub"], .string(signIn.user))
        XCTAssertEqual(claims["nonce"], "m-1")
        XCTAssertEqual(caused, [])
        XCTAssertEqual(domain.consentCount, consents)
        XCTAssertEqual(domain.pendingCodeCount, codes)
        // A user who never signed in gets a token, and still no consent.
        XCTAssertEqual(try domain.identityToken(userID: "bob", clientID: "com.example.app", nonce: nil, hideEmail: nil).claims.subject, teamSub("bob"))
        XCTAssertEqual(domain.consentCount, consents)
        // Refused twin: an unknown user.
        let refused = assertThrows(try domain.identityToken(userID: "zed", clientID: "com.example.app", nonce: nil, hideEmail: nil))
            as? AppleIDDomain.SignInRefusal
        XCTAssertEqual(refused, .invalid(field: "user", message: "no user \"zed\" in the scenario"))
    }

    // MARK: - Token, refresh, client credentials, revoke

    func testTokenAuthorizationCode_RedeemsOnce_AndRefusesASecondRedemptionAndAForeignSecret() throws {
        let domain = try makeDomain()
        let code = try XCTUnwrap(try approve(domain)["code"])
        // Refused twin first: a secret minted for another client does not authenticate, and
        // leaves the code unspent.
        let foreign = try XCTUnwrap(assertThrows(try domain.token(form: ["client_id": "com.example.web", "client_secret": try secret(domain, "com.example.app"),
                                                                   "grant_type": "authorization_code", "code": code,
                                                                   "redirect_uri": webRedirect])) as? OAuthError)
        XCTAssertEqual(foreign, .invalidClient)
        let answer = try redeem(domain, code)
        XCTAssertEqual(answer.keys, ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        XCTAssertTrue(matches(answer["access_token"]?.stringValue, accessTokenPattern))
        XCTAssertTrue(matches(answer["refresh_token"]?.stringValue, refreshTokenPattern))
        XCTAssertEqual(answer["expires_in"], .int(3600))
        let claims = try verifiedClaims(domain, answer["id_token"]?.stringValue)
        XCTAssertEqual(claims["sub"], .string(teamSub("alice")))
        XCTAssertEqual(claims["at_hash"], .string(leftHalfHash(try XCTUnwrap(answer["access_token"]?.stringValue))))
        XCTAssertEqual(assertThrows(try redeem(domain, code)) as? OAuthError, .codeAlreadyUsed)
    }

    func testApprove_DrawsAgainWhenAFreshCodeEqualsAPendingOne_SoBothHoldersRedeem() throws {
        // The codec's random part (10 bytes a token) repeats for the first `repeats` draws: two
        // sign-ins of one user in one mock second then draw the same code.
        func domain(repeats: Int) throws -> AppleIDDomain {
            let draws = Mutex(0)
            return try makeDomain {
                $0.random = RandomSource { count in
                    guard count == 10, draws.withLock({ $0 += 1; return $0 <= repeats }) else { return SecureRandom.bytes(count) }
                    return [UInt8](repeating: 7, count: count)
                }
            }
        }
        let drawing = try domain(repeats: 2)
        let first = try XCTUnwrap(try approve(drawing)["code"])
        let second = try XCTUnwrap(try approve(drawing)["code"])
        XCTAssertNotEqual(first, second)
        XCTAssertEqual(drawing.pendingCodeCount, 2)
        XCTAssertNotNil(try redeem(drawing, first)["id_token"])
        XCTAssertNotNil(try redeem(drawing, second)["id_token"])
        // Refused twin: a source that repeats itself every time gets no code rather than
        // another holder's.
        let stuck = try domain(repeats: .max)
        let only = try XCTUnwrap(try approve(stuck)["code"])
        let refused = try XCTUnwrap(assertThrows(try approve(stuck)) as? AuthorizeError)
        XCTAssertEqual(refused.code, "temporarily_unavailable")
        XCTAssertEqual(refused.field, "code")
        XCTAssertEqual(stuck.pendingCodeCount, 1)
        XCTAssertNotNil(try redeem(stuck, only)["id_token"])
    }

    func testTokenRefresh_IssuesAnAccessToken_AndRefusesAnAccessTokenInItsPlace() throws {
        let domain = try makeDomain()
        let tokens = try redeem(domain, try XCTUnwrap(try approve(domain)["code"]))
        let refreshed = try refresh(domain, try XCTUnwrap(tokens["refresh_token"]?.stringValue))
        XCTAssertEqual(refreshed.keys, ["access_token", "token_type", "expires_in", "id_token"])
        XCTAssertTrue(matches(refreshed["access_token"]?.stringValue, accessTokenPattern))
        XCTAssertEqual(try verifiedClaims(domain, refreshed["id_token"]?.stringValue)["sub"], .string(teamSub("alice")))
        XCTAssertEqual(assertThrows(try refresh(domain, try XCTUnwrap(tokens["access_token"]?.stringValue))) as? OAuthError, .invalidGrant)
    }

    func testTokenClientCredentials_IssuesAMigrationToken_OnlyForUserMigrationScope() throws {
        let domain = try makeDomain()
        let answer = try domain.token(form: ["client_id": "com.example.app", "client_secret": try secret(domain, "com.example.app"),
                                       "grant_type": "client_credentials", "scope": "user.migration"])
        XCTAssertEqual(answer.keys, ["access_token", "token_type", "expires_in"])
        XCTAssertTrue(matches(answer["access_token"]?.stringValue, accessTokenPattern))
        let refused = assertThrows(try domain.token(form: ["client_id": "com.example.app", "client_secret": try secret(domain, "com.example.app"),
                                                     "grant_type": "client_credentials"]))
        XCTAssertEqual(refused as? OAuthError, .invalidScope)
    }

    func testRevoke_EndsTheConsentAsTheApp_AndReportsIt_WhileAnUnknownTokenChangesNothing() throws {
        let domain = try makeDomain()
        let tokens = try redeem(domain, try XCTUnwrap(try approve(domain)["code"]))
        let refreshToken = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        // Twin: an unknown token is accepted silently and ends nothing.
        let nothing = try events(of: domain) {
            try domain.revoke(form: ["client_id": "com.example.web", "client_secret": try secret(domain), "token": "r0000.0.aaaa.unknown"])
        }
        XCTAssertEqual(nothing, [])
        XCTAssertEqual(domain.consentCount, 1)
        let revoked = try events(of: domain) {
            try domain.revoke(form: ["client_id": "com.example.web", "client_secret": try secret(domain), "token": refreshToken])
        }
        XCTAssertEqual(summary(revoked), ["consent-revoked alice by app"])
        XCTAssertEqual(domain.consentCount, 0)
        XCTAssertEqual(assertThrows(try refresh(domain, refreshToken)) as? OAuthError, .invalidGrant)
        // A bad secret is refused before anything else.
        XCTAssertEqual(assertThrows(try domain.revoke(form: ["client_id": "com.example.web", "client_secret": "x.y.z", "token": refreshToken])) as? OAuthError,
                       .invalidClient)
    }

    // MARK: - Keys

    func testKeyOperations_PublishActivateRetire_ReportTheirEvents() async throws {
        let domain = try makeDomain()
        let published = try await events(of: domain) {
            let kid = try await domain.publishKey(keyID: "Custom1", privateKey: nil)
            XCTAssertEqual(kid, "Custom1")
        }
        XCTAssertEqual(summary(published), ["key-published Custom1"])
        XCTAssertEqual(domain.keyRecords.map(\.keyID), Self.initialKeys + ["Custom1"])
        XCTAssertEqual(domain.keyRecords.last?.state, .published)
        XCTAssertEqual(domain.keyRecords.last?.publishedAt, frozenNow)
        XCTAssertEqual(domain.signingKeyID, "W2ek7HdPaL")
        let activated = try events(of: domain) { try domain.activateKey("Custom1") }
        XCTAssertEqual(activated, [.keyActivated(kid: "Custom1", at: frozenNow)])
        XCTAssertEqual(domain.signingKeyID, "Custom1")
        XCTAssertEqual(domain.keyRecords.first?.state, .published)
        let retired = try events(of: domain) { try domain.retireKey("W2ek7HdPaL") }
        XCTAssertEqual(retired, [.keyRetired(kid: "W2ek7HdPaL", at: frozenNow, step: nil)])
        XCTAssertEqual(domain.keyRecords.first?.state, .retired)
        XCTAssertEqual(domain.keyRecords.first?.retiredAt, frozenNow)
        XCTAssertNil(domain.publicKey(keyID: "W2ek7HdPaL"))
        XCTAssertFalse(String(decoding: domain.jwksBody(shuffled: false), as: UTF8.self).contains("W2ek7HdPaL"))
        // New tokens carry the new kid.
        let token = try domain.identityToken(userID: "alice", clientID: "com.example.app", nonce: nil, hideEmail: nil).token
        XCTAssertEqual(try CompactJWS.parse(token).keyID, "Custom1")
    }

    func testKeyOperations_RefuseUnknownDuplicateActiveAndRetiredKeys() async throws {
        let domain = try makeDomain()
        try domain.retireKey("r8TcNf3QsJ")
        let before = domain.lastEventSequence
        XCTAssertEqual(assertThrows(try domain.activateKey("Nope1")) as? KeyOperationError, .unknown("Nope1"))
        XCTAssertEqual(assertThrows(try domain.retireKey("Nope1")) as? KeyOperationError, .unknown("Nope1"))
        let duplicate = await assertThrowsAsync { try await domain.publishKey(keyID: "Ymq4vB9xTz", privateKey: nil) }
        XCTAssertEqual(duplicate as? KeyOperationError, .duplicate("Ymq4vB9xTz"))
        // A retired kid stays taken.
        let retired = await assertThrowsAsync { try await domain.publishKey(keyID: "r8TcNf3QsJ", privateKey: nil) }
        XCTAssertEqual(retired as? KeyOperationError, .duplicate("r8TcNf3QsJ"))
        XCTAssertEqual(assertThrows(try domain.retireKey("W2ek7HdPaL")) as? KeyOperationError, .retiringActive("W2ek7HdPaL"))
        XCTAssertEqual(assertThrows(try domain.activateKey("r8TcNf3QsJ")) as? KeyOperationError, .retired("r8TcNf3QsJ"))
        XCTAssertEqual(domain.lastEventSequence, before, "a refused key operation reports nothing")
        XCTAssertEqual(domain.signingKeyID, "W2ek7HdPaL")
        XCTAssertEqual(domain.keyRecords.map(\.state), [.active, .published, .retired])
    }

    // The kid's form and the PEM are checked where they are decoded, by `POST /__mock/keys`
    // (KeysRouteTests.testKeysRoute_RefusesDuplicateBadKidAndBadPEM).
    func testPublishKey_TakesASuppliedKey_OrGeneratesOneUnderAFreshKid() async throws {
        let domain = try makeDomain()
        let pem = try String(contentsOfFile: repositoryRoot + "/Keys/signing/Ymq4vB9xTz.pem", encoding: .utf8)
        let copied = try await domain.publishKey(keyID: "Copy1", privateKey: try RSAPrivateKey(pem: pem))
        XCTAssertEqual(copied, "Copy1")
        XCTAssertEqual(domain.publicKey(keyID: "Copy1")?.modulus, domain.publicKey(keyID: "Ymq4vB9xTz")?.modulus)
        let generated = try await domain.publishKey(keyID: nil, privateKey: nil)
        XCTAssertTrue(matches(generated, "^[A-Za-z0-9]{10}$"), generated)
        XCTAssertNotEqual(domain.publicKey(keyID: generated)?.modulus, domain.publicKey(keyID: "Ymq4vB9xTz")?.modulus)
        XCTAssertEqual(domain.keyRecords.map(\.keyID), Self.initialKeys + ["Copy1", generated])
    }

    func testRotateKeys_PublishesAndActivatesAFreshKey_KeepingThePreviousPublished() async throws {
        let domain = try makeDomain()
        var rotated: (keyID: String, previous: String?, retired: [String])?
        let caused = try await events(of: domain) { rotated = try await domain.rotateKeys() }
        let step = try XCTUnwrap(rotated)
        XCTAssertEqual(step.previous, "W2ek7HdPaL")
        XCTAssertTrue(matches(step.keyID, "^[A-Za-z0-9]{10}$"), step.keyID)
        XCTAssertEqual(summary(caused), ["key-published \(step.keyID)", "key-activated \(step.keyID)"])
        XCTAssertEqual(domain.signingKeyID, step.keyID)
        XCTAssertEqual(domain.keyRecords.map(\.state), [.published, .published, .published, .active])
        XCTAssertNotNil(domain.publicKey(keyID: "W2ek7HdPaL"))
    }

    // MARK: - Users

    func testAddUser_AddsAndReportsIt_AndTheUserSignsInWithUserJSONOnce() throws {
        let domain = try makeDomain()
        let added = try events(of: domain) { XCTAssertEqual(try domain.addUser(freshUser()), freshUser()) }
        XCTAssertEqual(added, [.userAdded(AddedUser(user: freshUser(), teams: domain.scenario.teams))])
        XCTAssertEqual(domain.users.map(\.user.id), ["alice", "bob", "carol", "dora"])
        XCTAssertEqual(domain.user("dora")?.user, freshUser())
        XCTAssertEqual(try approve(domain, user: "dora")["user"], #"{"name":{"firstName":"Dora","lastName":"Doe"},"email":"dora@example.com"}"#)
        XCTAssertNil(try approve(domain, user: "dora")["user"])
    }

    func testAddUser_RefusesDuplicateIDsBadEmailAndBadID() throws {
        let domain = try makeDomain()
        _ = try domain.addUser(freshUser())
        XCTAssertEqual(assertThrows(try domain.addUser(freshUser())) as? UserOperationError, .duplicate("dora"))
        XCTAssertEqual(assertThrows(try domain.addUser(freshUser("alice"))) as? UserOperationError, .duplicate("alice"))
        var badEmail = freshUser("erin")
        badEmail.email = "erin.example.com"
        let emailError = try XCTUnwrap(assertThrows(try domain.addUser(badEmail)) as? ControlInputError)
        XCTAssertEqual(emailError.message, "expected an email address")
        XCTAssertEqual(emailError.field, "email")
        XCTAssertEqual((assertThrows(try domain.addUser(freshUser("bad id!"))) as? ControlInputError)?.field, "id")
        var badStatus = freshUser("fred")
        badStatus.realUserStatus = 3
        XCTAssertEqual((assertThrows(try domain.addUser(badStatus)) as? ControlInputError)?.field, "real_user_status")
        XCTAssertEqual(domain.users.map(\.user.id), ["alice", "bob", "carol", "dora"])
    }

    // MARK: - Clock

    func testMoveClock_ReportsClockChanged_AndRefusesAnInstantTokensCannotCarry() async throws {
        let domain = try makeDomain()
        let moved = try await events(of: domain) { try await domain.advanceClock(by: 301) }
        XCTAssertEqual(summary(moved), ["clock-changed \(frozenNow + 301) frozen"])
        XCTAssertEqual(domain.now, frozenNow + 301)
        let refused = await events(of: domain) {
            let error = await assertThrowsAsync { try await domain.moveClock([.set(7_258_118_400)]) }
            XCTAssertEqual((error as? MockClock.OutOfRange)?.instant, 7_258_118_400)
        }
        XCTAssertEqual(refused, [])
        XCTAssertEqual(domain.now, frozenNow + 301)
        try await domain.setClock(to: 1_893_456_000)
        XCTAssertEqual(try domain.identityToken(userID: "alice", clientID: "com.example.app", nonce: nil, hideEmail: nil).claims.issuedAt, 1_893_456_000)
    }

    func testTokenAuthorizationCode_FollowsTheMockClock_ExpiringAt300Seconds() async throws {
        let domain = try makeDomain()
        let early = try XCTUnwrap(try approve(domain)["code"])
        let late = try XCTUnwrap(try approve(domain, user: "bob")["code"])
        try await domain.advanceClock(by: 299)
        XCTAssertNoThrow(try redeem(domain, early))
        try await domain.advanceClock(by: 1)
        XCTAssertEqual(assertThrows(try redeem(domain, late)) as? OAuthError, .codeExpired)
    }

    func testTokenAuthorizationCode_IsExpired_WhenIssuedAfterNow_AfterTheClockMovedBack() async throws {
        // Probe N14: a code issued at the later time redeemed, its id_token's auth_time after its iat.
        let domain = try makeDomain()
        let future = try XCTUnwrap(try approve(domain)["code"])
        try await domain.advanceClock(by: -31_536_000)
        XCTAssertEqual(assertThrows(try redeem(domain, future)) as? OAuthError, .codeExpired)
        // The twin: a code issued at the earlier time, and the clock back where it was, redeems
        // with auth_time no later than iat.
        let now = try XCTUnwrap(try approve(domain, user: "bob")["code"])
        try await domain.advanceClock(by: 60)
        let answer = try redeem(domain, now)
        let claims = try verifiedClaims(domain, answer["id_token"]?.stringValue)
        XCTAssertLessThanOrEqual(try XCTUnwrap(claims["auth_time"]?.intValue), try XCTUnwrap(claims["iat"]?.intValue))
    }

    // MARK: - Reset

    func testReset_ReturnsToTheScenariosInitialState_AndReportsIt() async throws {
        let domain = try makeDomain()
        _ = try domain.addUser(freshUser())
        let tokens = try redeem(domain, try XCTUnwrap(try approve(domain)["code"]))
        let refreshToken = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let pending = try XCTUnwrap(try approve(domain, user: "bob")["code"])
        _ = try await domain.rotateKeys()
        try await domain.advanceClock(by: 1000)
        XCTAssertEqual(domain.consentCount, 2)

        let caused = events(of: domain) { _ = domain.reset() }
        XCTAssertEqual(summary(caused), ["reset"])
        XCTAssertEqual(domain.users.map(\.user.id), ["alice", "bob", "carol"])
        XCTAssertNil(domain.user("dora"))
        XCTAssertEqual(domain.consentCount, 0)
        XCTAssertEqual(domain.pendingCodeCount, 0)
        XCTAssertEqual(domain.now, frozenNow)
        XCTAssertTrue(domain.clockState.isFrozen)
        XCTAssertEqual(domain.keyRecords.map(\.keyID), Self.initialKeys)
        XCTAssertEqual(domain.keyRecords.map(\.state), [.active, .published, .published])
        XCTAssertEqual(domain.signingKeyID, "W2ek7HdPaL")
        // Nothing issued before works after.
        XCTAssertEqual(assertThrows(try refresh(domain, refreshToken)) as? OAuthError, .invalidGrant)
        XCTAssertEqual(assertThrows(try redeem(domain, pending)) as? OAuthError, .codeExpired)
        XCTAssertEqual((assertThrows(try approve(domain, user: "dora")) as? AuthorizeError)?.field, "user")
        // Twin: what is issued after works, and alice authorizes for the first time again.
        let again = try approve(domain)
        XCTAssertNotNil(again["user"])
        XCTAssertNoThrow(try redeem(domain, try XCTUnwrap(again["code"])))
    }

    // MARK: - Credential state, one test per state

    func testCredentialState_IsAuthorized_AfterASignIn_ByIDOrSub_AcrossTheAppGroup() throws {
        let domain = try makeDomain()
        try nativeSignIn(domain)
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .authorized)
        XCTAssertEqual(try domain.credentialState(user: teamSub("alice"), clientID: "com.example.app"), .authorized)
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.web"), .authorized)
        XCTAssertEqual(try domain.credentialState(user: "bob", clientID: "com.example.app"), .notFound)
    }

    func testCredentialState_IsRevoked_AfterTheAppRevokes() throws {
        let domain = try makeDomain()
        let tokens = try redeem(domain, try XCTUnwrap(try approve(domain)["code"]))
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .authorized)
        try domain.revoke(form: ["client_id": "com.example.web", "client_secret": try secret(domain), "token": try XCTUnwrap(tokens["access_token"]?.stringValue)])
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .revoked)
        XCTAssertEqual(try domain.credentialState(user: teamSub("alice"), clientID: "com.example.web"), .revoked)
    }

    func testCredentialState_IsNotFound_ForANewOrUnknownUser_AndAnUnknownClientIsRefused() throws {
        let domain = try makeDomain()
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .notFound)
        XCTAssertEqual(try domain.credentialState(user: "zed", clientID: "com.example.app"), .notFound)
        XCTAssertEqual(try domain.credentialState(user: teamSub("zed"), clientID: "com.example.app"), .notFound)
        let refused = try XCTUnwrap(assertThrows(try domain.credentialState(user: "alice", clientID: "com.nope")) as? ControlInputError)
        XCTAssertEqual(refused.message, "no client \"com.nope\" in the scenario")
        XCTAssertEqual(refused.field, "client_id")
    }

    func testCredentialState_IsTransferred_AfterATeamTransfer_AndTeamBTokensCarryTransferSub() throws {
        let domain = try makeTwoTeamDomain()
        try nativeSignIn(domain, user: "bob")
        try nativeSignIn(domain, user: "alice")
        let bearer = try XCTUnwrap(try domain.token(form: ["client_id": "com.example.app", "client_secret": try secret(domain, "com.example.app"),
                                                     "grant_type": "client_credentials", "scope": "user.migration"])["access_token"]?.stringValue)
        let form = ["sub": teamSub("bob"), "target": Self.teamB, "client_id": "com.example.app", "client_secret": try secret(domain, "com.example.app")]
        // Refused twin: no bearer, no transfer.
        XCTAssertEqual(assertThrows(try domain.userMigrationInfo(form: form, bearer: nil)) as? OAuthError, .invalidRequest)
        XCTAssertEqual(try domain.credentialState(user: "bob", clientID: "com.example.app"), .authorized)

        var answer = JSONObject()
        let caused = try events(of: domain) { answer = try domain.userMigrationInfo(form: form, bearer: bearer) }
        XCTAssertEqual(summary(caused), ["transfer-started bob MOCKTEAM01→\(Self.teamB)"])
        let transferSub = try XCTUnwrap(answer["transfer_sub"]?.stringValue)
        XCTAssertEqual(try domain.credentialState(user: "bob", clientID: "com.example.app"), .transferred)
        XCTAssertEqual(try domain.credentialState(user: teamSub("bob"), clientID: "com.example.app"), .transferred)
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .authorized)

        let minted = try domain.identityToken(userID: "bob", clientID: Self.teamBApp, nonce: nil, hideEmail: nil)
        XCTAssertEqual(minted.claims.subject, teamSub("bob", team: Self.teamB))
        XCTAssertEqual(minted.claims.transferSubject, transferSub)
        XCTAssertEqual(try verifiedClaims(domain, minted.token)["transfer_sub"], .string(transferSub))
        XCTAssertNil(try domain.identityToken(userID: "alice", clientID: Self.teamBApp, nonce: nil, hideEmail: nil).claims.transferSubject)
    }
}

import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// Team transfer through `POST /auth/usermigrationinfo` (docs/apple-behaviour.md §8): team A gets a
/// `transfer_sub`, team B redeems it for its own `sub`, and B's id_tokens carry `transfer_sub`
/// for 60 days.
final class MigrationEndpointTests: XCTestCase {
    private static let teamB = "MOCKTEAM02"
    private static let teamBKeyID = "MOCKKEY002"
    private static let teamBApp = "com.teamb.app"
    private let teamBKey = try! P256PrivateKey.generate()
    private let transferSubPattern = #"^[0-9]{6}\.[0-9a-f]{32}\.[0-9]{4}$"#
    private static let window: Double = 60 * 86_400

    private func startTwoTeams() throws -> any MockClient {
        let pem = try teamBKey.publicKey.pem
        return try frozenClient { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: Self.teamBKeyID, publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: Self.teamBApp, kind: .appID)]))
        }
    }

    private func teamAToken(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let answer = try assertTokenAnswer(try await mock.clientCredentials("com.example.app"), keys: ["access_token", "token_type", "expires_in"],
                                           file: file, line: line)
        return try XCTUnwrap(answer["access_token"]?.stringValue, file: file, line: line)
    }

    private func teamBToken(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let answer = try assertTokenAnswer(try await mock.clientCredentials(Self.teamBApp, teamID: Self.teamB, keyID: Self.teamBKeyID, key: teamBKey),
                                           keys: ["access_token", "token_type", "expires_in"], file: file, line: line)
        return try XCTUnwrap(answer["access_token"]?.stringValue, file: file, line: line)
    }

    private func teamBSecret(_ mock: any MockClient) async throws -> String {
        try await mock.secret(Self.teamBApp, teamID: Self.teamB, keyID: Self.teamBKeyID, key: teamBKey)
    }

    /// Team A asks for a transfer_sub.
    private func requestTransfer(_ mock: any MockClient, sub: String, bearer: String?, target: String = teamB,
                                 secret: String? = nil) async throws -> MockAnswer {
        let clientSecret: String
        if let secret { clientSecret = secret } else { clientSecret = try await mock.secret("com.example.app") }
        return try await mock.postForm("/auth/usermigrationinfo",
                                       [("sub", sub), ("target", target), ("client_id", "com.example.app"), ("client_secret", clientSecret)],
                                       headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    /// Team B redeems a transfer_sub.
    private func redeemTransfer(_ mock: any MockClient, _ transferSub: String, bearer: String?, clientID: String = teamBApp,
                                secret: String? = nil) async throws -> MockAnswer {
        let clientSecret: String
        if let secret { clientSecret = secret } else { clientSecret = try await teamBSecret(mock) }
        return try await mock.postForm("/auth/usermigrationinfo", [("transfer_sub", transferSub), ("client_id", clientID), ("client_secret", clientSecret)],
                                       headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    private func transferSub(_ response: MockAnswer, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        assertNoStoreJSONHeaders(response, file: file, line: line)
        let answer = try jsonObject(response.body, file: file, line: line)
        XCTAssertEqual(answer.keys, ["transfer_sub"], file: file, line: line)
        let value = try XCTUnwrap(answer["transfer_sub"]?.stringValue, file: file, line: line)
        XCTAssertTrue(matches(value, transferSubPattern), value, file: file, line: line)
        return value
    }

    func testMigration_TransferSubIsStable_AndTeamBRedeemsItWithRelayEmail() async throws {
        let mock = try startTwoTeams()
        let signedIn = try await mock.nativeSignIn(user: "bob")
        XCTAssertEqual(signedIn.status, 200) // bob hides his email
        let tokenA = try await teamAToken(mock)
        let first = try transferSub(try await requestTransfer(mock, sub: teamSub("bob"), bearer: tokenA))
        try await mock.advanceClock(by: 100)
        let again = try transferSub(try await requestTransfer(mock, sub: teamSub("bob"), bearer: tokenA))
        XCTAssertEqual(again, first)
        XCTAssertNotEqual(first, teamSub("bob"))
        XCTAssertNotEqual(first, teamSub("bob", team: Self.teamB))

        let redeemed = try await redeemTransfer(mock, first, bearer: try await teamBToken(mock))
        XCTAssertEqual(redeemed.status, 200, redeemed.text)
        assertNoStoreJSONHeaders(redeemed)
        let answer = try jsonObject(redeemed.body)
        XCTAssertEqual(answer.keys, ["sub", "email", "is_private_email"])
        XCTAssertEqual(answer["sub"], .string(teamSub("bob", team: Self.teamB)))
        XCTAssertEqual(answer["is_private_email"], true)
        let email = try XCTUnwrap(answer["email"]?.stringValue)
        XCTAssertTrue(matches(email, relayPattern), email)
    }

    func testMigration_RedeemedRelayEmail_IsTheReceivingTeamsAddress_AsInItsIDTokens() async throws {
        // Relay addresses are per team (§6); a transfer gives hidden-email users a new one under
        // the receiving team, and the receiving team's exchange returns that team-scoped address
        // (TN3159: "team-scoped user identifiers and private email addresses") so it matches what
        // the team's id_tokens will carry.
        let mock = try startTwoTeams()
        let signedIn = try await mock.nativeSignIn(user: "bob")
        XCTAssertEqual(signedIn.status, 200) // bob hides his email
        let transfer = try transferSub(try await requestTransfer(mock, sub: teamSub("bob"), bearer: try await teamAToken(mock)))
        let answer = try jsonObject(try await redeemTransfer(mock, transfer, bearer: try await teamBToken(mock)).body)
        let signIn = try jsonObject(try await mock.nativeSignIn(user: "bob", clientID: Self.teamBApp).body)
        let claims = try await mock.verifiedClaims(signIn["identityToken"]?.stringValue)
        let idTokenEmail = try XCTUnwrap(claims["email"]?.stringValue)
        XCTAssertEqual(idTokenEmail, Identity.relayAddress(teamID: Self.teamB, userID: "bob"))
        XCTAssertEqual(answer["email"]?.stringValue, idTokenEmail,
                       "usermigrationinfo gave team B the sending team's relay address, not the one team B's id_tokens carry")
        XCTAssertNotEqual(answer["email"]?.stringValue, Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob"))
    }

    func testMigration_SharedEmailUser_RedeemsToSubOnly() async throws {
        let mock = try startTwoTeams()
        assertStatus(try await mock.nativeSignIn(user: "alice"), 200)
        let transfer = try transferSub(try await requestTransfer(mock, sub: teamSub("alice"), bearer: try await teamAToken(mock)))
        let redeemed = try await redeemTransfer(mock, transfer, bearer: try await teamBToken(mock))
        XCTAssertEqual(redeemed.status, 200, redeemed.text)
        XCTAssertEqual(redeemed.text, #"{"sub":"\#(teamSub("alice", team: Self.teamB))"}"#)
    }

    func testMigration_UserAccessTokenAlsoAuthorizesTheSendingTeam() async throws {
        let mock = try startTwoTeams()
        let tokens = try await mock.webTokens(user: "alice")
        let userAccess = try XCTUnwrap(tokens["access_token"]?.stringValue)
        assertStatus(try await mock.postForm("/auth/usermigrationinfo",
                                           [("sub", teamSub("alice")), ("target", Self.teamB), ("client_id", "com.example.web"),
                                            ("client_secret", try await mock.secret("com.example.web"))],
                                           headers: [("Authorization", "Bearer \(userAccess)")]), 200)
    }

    func testMigration_TeamBIDTokensCarryTransferSub_UntilSixtyDaysPass() async throws {
        let mock = try startTwoTeams()
        assertStatus(try await mock.nativeSignIn(user: "bob"), 200)
        let transfer = try transferSub(try await requestTransfer(mock, sub: teamSub("bob"), bearer: try await teamAToken(mock)))

        // Before any transfer, alice's id_tokens in team B carry no transfer_sub (twin).
        let alice = try jsonObject(try await mock.nativeSignIn(user: "alice", clientID: Self.teamBApp).body)
        let aliceTransfer = try await mock.verifiedClaims(alice["identityToken"]?.stringValue)["transfer_sub"]
        XCTAssertNil(aliceTransfer)

        let signIn = try jsonObject(try await mock.nativeSignIn(user: "bob", clientID: Self.teamBApp, nonce: "b-1").body)
        let code = try XCTUnwrap(signIn["authorizationCode"]?.stringValue)
        let claims = try await mock.verifiedClaims(signIn["identityToken"]?.stringValue)
        XCTAssertEqual(Array(claims.keys.prefix(7)), ["iss", "aud", "exp", "iat", "sub", "transfer_sub", "nonce"])
        XCTAssertEqual(claims["sub"], .string(teamSub("bob", team: Self.teamB)))
        XCTAssertEqual(claims["transfer_sub"], .string(transfer))
        XCTAssertEqual(claims["aud"], .string(Self.teamBApp))
        // The code exchange at team B carries it too.
        let exchanged = try assertTokenAnswer(try await mock.redeem(code, clientID: Self.teamBApp, redirectURI: nil, secret: try await teamBSecret(mock)),
                                              keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let exchangedTransfer = try await mock.verifiedClaims(exchanged["id_token"]?.stringValue)["transfer_sub"]
        XCTAssertEqual(exchangedTransfer, .string(transfer))
        let refreshToken = try XCTUnwrap(exchanged["refresh_token"]?.stringValue)
        // Team A's own tokens never do.
        let teamA = try jsonObject(try await mock.nativeSignIn(user: "bob", clientID: "com.example.app").body)
        let teamATransfer = try await mock.verifiedClaims(teamA["identityToken"]?.stringValue)["transfer_sub"]
        XCTAssertNil(teamATransfer)

        // Last second of the window: still there, and redeemable.
        try await mock.advanceClock(by: Self.window - 1)
        let late = try jsonObject(try await mock.nativeSignIn(user: "bob", clientID: Self.teamBApp).body)
        let lateTransfer = try await mock.verifiedClaims(late["identityToken"]?.stringValue)["transfer_sub"]
        XCTAssertEqual(lateTransfer, .string(transfer))
        assertStatus(try await redeemTransfer(mock, transfer, bearer: try await teamBToken(mock)), 200)

        // Window over: the claim is gone and the endpoint refuses.
        try await mock.advanceClock(by: 1)
        let after = try jsonObject(try await mock.nativeSignIn(user: "bob", clientID: Self.teamBApp).body)
        let afterClaims = try await mock.verifiedClaims(after["identityToken"]?.stringValue)
        XCTAssertNil(afterClaims["transfer_sub"])
        XCTAssertEqual(afterClaims["sub"], .string(teamSub("bob", team: Self.teamB)))
        let refreshed = try await mock.postForm("/auth/token", [("client_id", Self.teamBApp), ("client_secret", try await teamBSecret(mock)),
                                                            ("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        let refreshedTransfer = try await mock.verifiedClaims(try jsonObject(refreshed.body)["id_token"]?.stringValue)["transfer_sub"]
        XCTAssertNil(refreshedTransfer)
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: try await teamBToken(mock)), #"{"error":"invalid_request"}"#)
    }

    func testMigration_AfterWindow_SendingTeamGetsNoDeadTransferSub() async throws {
        let mock = try startTwoTeams()
        assertStatus(try await mock.nativeSignIn(user: "bob"), 200)
        let transfer = try transferSub(try await requestTransfer(mock, sub: teamSub("bob"), bearer: try await teamAToken(mock)))
        try await mock.advanceClock(by: Self.window)
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: try await teamBToken(mock)), #"{"error":"invalid_request"}"#)
        // §8: after 60 days the migration endpoint stops working (or, per TN3159, a new transfer
        // starts a new window). Either way team A must not be handed a transfer_sub that team B
        // can never redeem.
        let again = try await requestTransfer(mock, sub: teamSub("bob"), bearer: try await teamAToken(mock))
        if again.status == 200 {
            let reissued = try transferSub(again)
            let redeemed = try await redeemTransfer(mock, reissued, bearer: try await teamBToken(mock))
            XCTAssertEqual(redeemed.status, 200, "team A got transfer_sub \(reissued) after the window, but team B cannot redeem it: \(redeemed.text)")
        } else {
            assertAppleError(again, #"{"error":"invalid_request"}"#)
        }
    }

    func testMigration_RejectsMissingOrForeignBearer_BadSecret_UnknownSub() async throws {
        let mock = try startTwoTeams()
        assertStatus(try await mock.nativeSignIn(user: "bob"), 200)
        let tokenA = try await teamAToken(mock)
        let tokenB = try await teamBToken(mock)
        let bob = teamSub("bob")
        assertAppleError(try await requestTransfer(mock, sub: bob, bearer: nil), #"{"error":"invalid_request"}"#)
        assertAppleError(try await requestTransfer(mock, sub: bob, bearer: tokenB), #"{"error":"invalid_request"}"#)
        assertAppleError(try await requestTransfer(mock, sub: bob, bearer: "garbage"), #"{"error":"invalid_request"}"#)
        assertAppleError(try await requestTransfer(mock, sub: bob, bearer: tokenA, secret: try await mock.secret("com.example.app", key: teamBKey)),
                         #"{"error":"invalid_client"}"#)
        assertAppleError(try await requestTransfer(mock, sub: teamSub("alice"), bearer: tokenA), #"{"error":"invalid_request"}"#) // never signed in
        assertAppleError(try await requestTransfer(mock, sub: "000000.00000000000000000000000000000000.0000", bearer: tokenA),
                         #"{"error":"invalid_request"}"#)
        assertAppleError(try await requestTransfer(mock, sub: bob, bearer: tokenA, target: "NOSUCHTEAM"), #"{"error":"invalid_request"}"#)
        assertAppleError(try await requestTransfer(mock, sub: bob, bearer: tokenA, target: "MOCKTEAM01"), #"{"error":"invalid_request"}"#)
        // Twin: all right, it works.
        let transfer = try transferSub(try await requestTransfer(mock, sub: bob, bearer: tokenA))

        // Receiving side: foreign bearer, wrong team redeeming, bad secret, unknown transfer_sub.
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: nil), #"{"error":"invalid_request"}"#)
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: tokenA), #"{"error":"invalid_request"}"#)
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: tokenA, clientID: "com.example.app",
                                            secret: try await mock.secret("com.example.app")), #"{"error":"invalid_request"}"#)
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: tokenB, secret: try await mock.secret(Self.teamBApp, teamID: Self.teamB,
                                                                                                            keyID: Self.teamBKeyID)),
                         #"{"error":"invalid_client"}"#)
        assertAppleError(try await redeemTransfer(mock, teamSub("bob", team: Self.teamB), bearer: tokenB), #"{"error":"invalid_request"}"#)
        assertStatus(try await redeemTransfer(mock, transfer, bearer: tokenB), 200)

        // An expired bearer (access tokens live 3600 s) is refused; a fresh one works.
        try await mock.advanceClock(by: 3600)
        assertAppleError(try await redeemTransfer(mock, transfer, bearer: tokenB), #"{"error":"invalid_request"}"#)
        assertStatus(try await redeemTransfer(mock, transfer, bearer: try await teamBToken(mock)), 200)
    }
}

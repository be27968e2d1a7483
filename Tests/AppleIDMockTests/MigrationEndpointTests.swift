import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Team transfer through `POST /auth/usermigrationinfo` (apple-reference.md §8): team A gets a
/// `transfer_sub`, team B redeems it for its own `sub`, and B's id_tokens carry `transfer_sub`
/// for 60 days.
final class MigrationEndpointTests: XCTestCase {
    private static let teamB = "MOCKTEAM02"
    private static let teamBKeyID = "MOCKKEY002"
    private static let teamBApp = "com.teamb.app"
    private let teamBKey = try! P256PrivateKey.generate()
    private let transferSubPattern = #"^[0-9]{6}\.[0-9a-f]{32}\.[0-9]{4}$"#
    private static let window: Double = 60 * 86_400

    private func startTwoTeams() throws -> AppleIDMockServer {
        let pem = try teamBKey.publicKey.pem
        return try startFrozenMock { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: Self.teamBKeyID, publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: Self.teamBApp, kind: .appID)]))
        }
    }

    private func teamAToken(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let answer = try assertTokenAnswer(try server.clientCredentials("com.example.app"), keys: ["access_token", "token_type", "expires_in"],
                                           file: file, line: line)
        return try XCTUnwrap(answer["access_token"]?.stringValue, file: file, line: line)
    }

    private func teamBToken(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let answer = try assertTokenAnswer(try server.clientCredentials(Self.teamBApp, teamID: Self.teamB, keyID: Self.teamBKeyID, key: teamBKey),
                                           keys: ["access_token", "token_type", "expires_in"], file: file, line: line)
        return try XCTUnwrap(answer["access_token"]?.stringValue, file: file, line: line)
    }

    private func teamBSecret(_ server: AppleIDMockServer) throws -> String {
        try server.secret(Self.teamBApp, teamID: Self.teamB, keyID: Self.teamBKeyID, key: teamBKey)
    }

    /// Team A asks for a transfer_sub.
    private func requestTransfer(_ server: AppleIDMockServer, sub: String, bearer: String?, target: String = teamB,
                                 secret: String? = nil) throws -> RawHTTPResponse {
        try server.postForm("/auth/usermigrationinfo",
                            [("sub", sub), ("target", target), ("client_id", "com.example.app"),
                             ("client_secret", try secret ?? server.secret("com.example.app"))],
                            headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    /// Team B redeems a transfer_sub.
    private func redeemTransfer(_ server: AppleIDMockServer, _ transferSub: String, bearer: String?, clientID: String = teamBApp,
                                secret: String? = nil) throws -> RawHTTPResponse {
        try server.postForm("/auth/usermigrationinfo",
                            [("transfer_sub", transferSub), ("client_id", clientID), ("client_secret", try secret ?? teamBSecret(server))],
                            headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    private func transferSub(_ response: RawHTTPResponse, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        assertNoStoreJSONHeaders(response, file: file, line: line)
        let answer = try jsonObject(response.body, file: file, line: line)
        XCTAssertEqual(answer.keys, ["transfer_sub"], file: file, line: line)
        let value = try XCTUnwrap(answer["transfer_sub"]?.stringValue, file: file, line: line)
        XCTAssertTrue(matches(value, transferSubPattern), value, file: file, line: line)
        return value
    }

    func testMigration_TransferSubIsStable_AndTeamBRedeemsItWithRelayEmail() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200) // bob hides his email
        let tokenA = try teamAToken(server)
        let first = try transferSub(try requestTransfer(server, sub: teamSub("bob"), bearer: tokenA))
        try server.domain.clock.advance(by: 100)
        XCTAssertEqual(try transferSub(try requestTransfer(server, sub: teamSub("bob"), bearer: tokenA)), first)
        XCTAssertNotEqual(first, teamSub("bob"))
        XCTAssertNotEqual(first, teamSub("bob", team: Self.teamB))

        let redeemed = try redeemTransfer(server, first, bearer: try teamBToken(server))
        XCTAssertEqual(redeemed.status, 200, redeemed.text)
        assertNoStoreJSONHeaders(redeemed)
        let answer = try jsonObject(redeemed.body)
        XCTAssertEqual(answer.keys, ["sub", "email", "is_private_email"])
        XCTAssertEqual(answer["sub"], .string(teamSub("bob", team: Self.teamB)))
        XCTAssertEqual(answer["is_private_email"], true)
        let email = try XCTUnwrap(answer["email"]?.stringValue)
        XCTAssertTrue(matches(email, relayPattern), email)
    }

    func testMigration_RedeemedRelayEmail_IsTheReceivingTeamsAddress_AsInItsIDTokens() throws {
        // Relay addresses are per team (§6); a transfer gives hidden-email users a new one under
        // the receiving team, and the receiving team's exchange returns that team-scoped address
        // (TN3159: "team-scoped user identifiers and private email addresses") so it matches what
        // the team's id_tokens will carry.
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200) // bob hides his email
        let transfer = try transferSub(try requestTransfer(server, sub: teamSub("bob"), bearer: try teamAToken(server)))
        let answer = try jsonObject(try redeemTransfer(server, transfer, bearer: try teamBToken(server)).body)
        let signIn = try jsonObject(try server.nativeSignIn(user: "bob", clientID: Self.teamBApp).body)
        let idTokenEmail = try XCTUnwrap(try server.verifiedClaims(signIn["identityToken"]?.stringValue)["email"]?.stringValue)
        XCTAssertEqual(idTokenEmail, Identity.relayAddress(teamID: Self.teamB, userID: "bob"))
        XCTAssertEqual(answer["email"]?.stringValue, idTokenEmail,
                       "usermigrationinfo gave team B the sending team's relay address, not the one team B's id_tokens carry")
        XCTAssertNotEqual(answer["email"]?.stringValue, Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob"))
    }

    func testMigration_SharedEmailUser_RedeemsToSubOnly() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "alice").status, 200)
        let transfer = try transferSub(try requestTransfer(server, sub: teamSub("alice"), bearer: try teamAToken(server)))
        let redeemed = try redeemTransfer(server, transfer, bearer: try teamBToken(server))
        XCTAssertEqual(redeemed.status, 200, redeemed.text)
        XCTAssertEqual(redeemed.text, #"{"sub":"\#(teamSub("alice", team: Self.teamB))"}"#)
    }

    func testMigration_UserAccessTokenAlsoAuthorizesTheSendingTeam() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        let tokens = try server.webTokens(user: "alice")
        let userAccess = try XCTUnwrap(tokens["access_token"]?.stringValue)
        XCTAssertEqual(try server.postForm("/auth/usermigrationinfo",
                                           [("sub", teamSub("alice")), ("target", Self.teamB), ("client_id", "com.example.web"),
                                            ("client_secret", try server.secret("com.example.web"))],
                                           headers: [("Authorization", "Bearer \(userAccess)")]).status, 200)
    }

    func testMigration_TeamBIDTokensCarryTransferSub_UntilSixtyDaysPass() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200)
        let transfer = try transferSub(try requestTransfer(server, sub: teamSub("bob"), bearer: try teamAToken(server)))

        // Before any transfer, alice's id_tokens in team B carry no transfer_sub (twin).
        let alice = try jsonObject(try server.nativeSignIn(user: "alice", clientID: Self.teamBApp).body)
        XCTAssertNil(try server.verifiedClaims(alice["identityToken"]?.stringValue)["transfer_sub"])

        let signIn = try jsonObject(try server.nativeSignIn(user: "bob", clientID: Self.teamBApp, nonce: "b-1").body)
        let code = try XCTUnwrap(signIn["authorizationCode"]?.stringValue)
        let claims = try server.verifiedClaims(signIn["identityToken"]?.stringValue)
        XCTAssertEqual(Array(claims.keys.prefix(7)), ["iss", "aud", "exp", "iat", "sub", "transfer_sub", "nonce"])
        XCTAssertEqual(claims["sub"], .string(teamSub("bob", team: Self.teamB)))
        XCTAssertEqual(claims["transfer_sub"], .string(transfer))
        XCTAssertEqual(claims["aud"], .string(Self.teamBApp))
        // The code exchange at team B carries it too.
        let exchanged = try assertTokenAnswer(try server.redeem(code, clientID: Self.teamBApp, redirectURI: nil, secret: try teamBSecret(server)),
                                              keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        XCTAssertEqual(try server.verifiedClaims(exchanged["id_token"]?.stringValue)["transfer_sub"], .string(transfer))
        let refreshToken = try XCTUnwrap(exchanged["refresh_token"]?.stringValue)
        // Team A's own tokens never do.
        let teamA = try jsonObject(try server.nativeSignIn(user: "bob", clientID: "com.example.app").body)
        XCTAssertNil(try server.verifiedClaims(teamA["identityToken"]?.stringValue)["transfer_sub"])

        // Last second of the window: still there, and redeemable.
        try server.domain.clock.advance(by: Self.window - 1)
        let late = try jsonObject(try server.nativeSignIn(user: "bob", clientID: Self.teamBApp).body)
        XCTAssertEqual(try server.verifiedClaims(late["identityToken"]?.stringValue)["transfer_sub"], .string(transfer))
        XCTAssertEqual(try redeemTransfer(server, transfer, bearer: try teamBToken(server)).status, 200)

        // Window over: the claim is gone and the endpoint refuses.
        try server.domain.clock.advance(by: 1)
        let after = try jsonObject(try server.nativeSignIn(user: "bob", clientID: Self.teamBApp).body)
        let afterClaims = try server.verifiedClaims(after["identityToken"]?.stringValue)
        XCTAssertNil(afterClaims["transfer_sub"])
        XCTAssertEqual(afterClaims["sub"], .string(teamSub("bob", team: Self.teamB)))
        let refreshed = try server.postForm("/auth/token", [("client_id", Self.teamBApp), ("client_secret", try teamBSecret(server)),
                                                            ("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
        XCTAssertNil(try server.verifiedClaims(try jsonObject(refreshed.body)["id_token"]?.stringValue)["transfer_sub"])
        assertAppleError(try redeemTransfer(server, transfer, bearer: try teamBToken(server)), #"{"error":"invalid_request"}"#)
    }

    func testMigration_AfterWindow_SendingTeamGetsNoDeadTransferSub() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200)
        let transfer = try transferSub(try requestTransfer(server, sub: teamSub("bob"), bearer: try teamAToken(server)))
        try server.domain.clock.advance(by: Self.window)
        assertAppleError(try redeemTransfer(server, transfer, bearer: try teamBToken(server)), #"{"error":"invalid_request"}"#)
        // §8: after 60 days the migration endpoint stops working (or, per TN3159, a new transfer
        // starts a new window). Either way team A must not be handed a transfer_sub that team B
        // can never redeem.
        let again = try requestTransfer(server, sub: teamSub("bob"), bearer: try teamAToken(server))
        if again.status == 200 {
            let reissued = try transferSub(again)
            let redeemed = try redeemTransfer(server, reissued, bearer: try teamBToken(server))
            XCTAssertEqual(redeemed.status, 200, "team A got transfer_sub \(reissued) after the window, but team B cannot redeem it: \(redeemed.text)")
        } else {
            assertAppleError(again, #"{"error":"invalid_request"}"#)
        }
    }

    func testMigration_RejectsMissingOrForeignBearer_BadSecret_UnknownSub() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200)
        let tokenA = try teamAToken(server)
        let tokenB = try teamBToken(server)
        let bob = teamSub("bob")
        assertAppleError(try requestTransfer(server, sub: bob, bearer: nil), #"{"error":"invalid_request"}"#)
        assertAppleError(try requestTransfer(server, sub: bob, bearer: tokenB), #"{"error":"invalid_request"}"#)
        assertAppleError(try requestTransfer(server, sub: bob, bearer: "garbage"), #"{"error":"invalid_request"}"#)
        assertAppleError(try requestTransfer(server, sub: bob, bearer: tokenA, secret: try server.secret("com.example.app", key: teamBKey)),
                         #"{"error":"invalid_client"}"#)
        assertAppleError(try requestTransfer(server, sub: teamSub("alice"), bearer: tokenA), #"{"error":"invalid_request"}"#) // never signed in
        assertAppleError(try requestTransfer(server, sub: "000000.00000000000000000000000000000000.0000", bearer: tokenA),
                         #"{"error":"invalid_request"}"#)
        assertAppleError(try requestTransfer(server, sub: bob, bearer: tokenA, target: "NOSUCHTEAM"), #"{"error":"invalid_request"}"#)
        assertAppleError(try requestTransfer(server, sub: bob, bearer: tokenA, target: "MOCKTEAM01"), #"{"error":"invalid_request"}"#)
        // Twin: all right, it works.
        let transfer = try transferSub(try requestTransfer(server, sub: bob, bearer: tokenA))

        // Receiving side: foreign bearer, wrong team redeeming, bad secret, unknown transfer_sub.
        assertAppleError(try redeemTransfer(server, transfer, bearer: nil), #"{"error":"invalid_request"}"#)
        assertAppleError(try redeemTransfer(server, transfer, bearer: tokenA), #"{"error":"invalid_request"}"#)
        assertAppleError(try redeemTransfer(server, transfer, bearer: tokenA, clientID: "com.example.app",
                                            secret: try server.secret("com.example.app")), #"{"error":"invalid_request"}"#)
        assertAppleError(try redeemTransfer(server, transfer, bearer: tokenB, secret: try server.secret(Self.teamBApp, teamID: Self.teamB,
                                                                                                            keyID: Self.teamBKeyID)),
                         #"{"error":"invalid_client"}"#)
        assertAppleError(try redeemTransfer(server, teamSub("bob", team: Self.teamB), bearer: tokenB), #"{"error":"invalid_request"}"#)
        XCTAssertEqual(try redeemTransfer(server, transfer, bearer: tokenB).status, 200)

        // An expired bearer (access tokens live 3600 s) is refused; a fresh one works.
        try server.domain.clock.advance(by: 3600)
        assertAppleError(try redeemTransfer(server, transfer, bearer: tokenB), #"{"error":"invalid_request"}"#)
        XCTAssertEqual(try redeemTransfer(server, transfer, bearer: try teamBToken(server)).status, 200)
    }
}

import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `POST /auth/token` with `grant_type=refresh_token` (apple-reference.md §1.3, §2.1, §9).
final class RefreshGrantTests: XCTestCase {
    private let refreshKeys = ["access_token", "token_type", "expires_in", "id_token"]

    private func refreshToken(_ server: AppleIDMockServer, user: String = "alice", file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try XCTUnwrap(try server.webTokens(user: user, file: file, line: line)["refresh_token"]?.stringValue, file: file, line: line)
    }

    func testRefresh_AnswersWithoutRefreshToken_IDTokenWithoutAuthTimeOrHashes() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let token = try refreshToken(server)
        try server.domain.clock.advance(by: 86_400 * 3)
        let response = try server.refresh(token)
        let answer = try assertTokenAnswer(response, keys: refreshKeys)
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        XCTAssertTrue(matches(access, accessTokenPattern), access)
        let idToken = try XCTUnwrap(answer["id_token"]?.stringValue)
        XCTAssertEqual(response.text, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600,"id_token":"\#(idToken)"}"#)
        XCTAssertEqual(try server.verifiedPayload(idToken),
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1700345600,"iat":1700259200,"sub":"\#(teamSub("alice"))","email":"alice@example.com","email_verified":true,"nonce_supported":true}"#)
    }

    func testRefresh_SameRefreshTokenWorksAgain_NoRotation() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let token = try refreshToken(server)
        let first = try assertTokenAnswer(try server.refresh(token), keys: refreshKeys)
        try server.domain.clock.advance(by: 1)
        let second = try assertTokenAnswer(try server.refresh(token), keys: refreshKeys)
        XCTAssertNotEqual(first["access_token"], second["access_token"], "each refresh mints a new access token")
        try assertTokenAnswer(try server.refresh(token), keys: refreshKeys)
    }

    func testRefresh_ReturnsTheRefreshToken_WhenKnobOn() throws {
        let server = try startFrozenMock { $0.scenario.compatibility.refreshReturnsRefreshToken = true }
        defer { server.stop() }
        let token = try refreshToken(server)
        let answer = try assertTokenAnswer(try server.refresh(token), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        XCTAssertEqual(answer["refresh_token"], .string(token))
    }

    func testRefresh_OmitsIDToken_WhenKnobOff() throws {
        let server = try startFrozenMock { $0.scenario.compatibility.refreshReturnsIDToken = false }
        defer { server.stop() }
        let token = try refreshToken(server)
        try assertTokenAnswer(try server.refresh(token), keys: ["access_token", "token_type", "expires_in"])
        // The code exchange itself still returns an id_token.
        XCTAssertNotNil(try server.webTokens(user: "bob")["id_token"])
    }

    func testRefresh_ReturnsInvalidGrant_ForAnotherClientsToken() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let signIn = try jsonObject(try server.nativeSignIn().body)
        let code = try XCTUnwrap(signIn["authorizationCode"]?.stringValue)
        let native = try assertTokenAnswer(try server.redeem(code, clientID: "com.example.app", redirectURI: nil),
                                           keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let token = try XCTUnwrap(native["refresh_token"]?.stringValue)
        assertAppleError(try server.refresh(token, clientID: "com.example.web"), #"{"error":"invalid_grant"}"#)
        let answer = try assertTokenAnswer(try server.refresh(token, clientID: "com.example.app"), keys: refreshKeys)
        XCTAssertEqual(try server.verifiedClaims(answer["id_token"]?.stringValue)["aud"], "com.example.app")
    }

    func testRefresh_ReturnsInvalidGrant_ForGarbageForgedOrAccessToken() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let tokens = try server.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        var tampered = Array(refresh)
        tampered[5] = tampered[5] == "a" ? "b" : "a"
        for bad in ["garbage", "rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow", String(tampered),
                    try XCTUnwrap(tokens["access_token"]?.stringValue), try XCTUnwrap(tokens["id_token"]?.stringValue)] {
            assertAppleError(try server.refresh(bad), #"{"error":"invalid_grant"}"#)
        }
        let missing = try server.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try server.secret()),
                                                          ("grant_type", "refresh_token")])
        assertAppleError(missing, #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try server.refresh(refresh), keys: refreshKeys)
    }

    func testRefresh_ReturnsInvalidGrant_AfterRevoke() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let token = try refreshToken(server)
        let bobToken = try refreshToken(server, user: "bob")
        XCTAssertEqual(try server.revoke(token).status, 200)
        assertAppleError(try server.refresh(token), #"{"error":"invalid_grant"}"#)
        try assertTokenAnswer(try server.refresh(bobToken), keys: refreshKeys)
    }

    func testRefresh_ReturnsInvalidRequest_AfterUserRevokedConsent() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let token = try refreshToken(server)
        let bobToken = try refreshToken(server, user: "bob")
        XCTAssertEqual(server.domain.state.revokeConsents(userID: "alice", by: .byUser), 1)
        assertAppleError(try server.refresh(token), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try server.refresh(bobToken), keys: refreshKeys)
    }

    func testRefresh_ReturnsConfiguredError_AfterUserRevokedConsent_WhenKnobSaysInvalidGrant() throws {
        let server = try startFrozenMock { $0.scenario.compatibility.revokedConsentRefreshError = "invalid_grant" }
        defer { server.stop() }
        let token = try refreshToken(server)
        server.domain.state.revokeConsents(userID: "alice", by: .byUser)
        assertAppleError(try server.refresh(token), #"{"error":"invalid_grant"}"#)
    }
}

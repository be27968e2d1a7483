import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /auth/token` with `grant_type=refresh_token` (docs/apple-behaviour.md §1.3, §2.1, §9).
final class RefreshGrantTests: XCTestCase {
    private let refreshKeys = ["access_token", "token_type", "expires_in", "id_token"]

    private func refreshToken(_ mock: any MockClient, user: String = "alice", file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let tokens = try await mock.webTokens(user: user, file: file, line: line)
        return try XCTUnwrap(tokens["refresh_token"]?.stringValue, file: file, line: line)
    }

    func testRefresh_AnswersWithoutRefreshToken_IDTokenWithoutAuthTimeOrHashes() async throws {
        let mock = try frozenClient()
        let token = try await refreshToken(mock)
        try await mock.advanceClock(by: 86_400 * 3)
        let response = try await mock.refresh(token)
        let answer = try assertTokenAnswer(response, keys: refreshKeys)
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        XCTAssertTrue(matches(access, accessTokenPattern), access)
        let idToken = try XCTUnwrap(answer["id_token"]?.stringValue)
        XCTAssertEqual(response.text, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600,"id_token":"\#(idToken)"}"#)
        let payload = try await mock.verifiedPayload(idToken)
        XCTAssertEqual(payload,
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1700345600,"iat":1700259200,"sub":"\#(teamSub("alice"))","email":"alice@example.com","email_verified":true,"nonce_supported":true}"#)
    }

    func testRefresh_SameRefreshTokenWorksAgain_NoRotation() async throws {
        let mock = try frozenClient()
        let token = try await refreshToken(mock)
        let first = try assertTokenAnswer(try await mock.refresh(token), keys: refreshKeys)
        try await mock.advanceClock(by: 1)
        let second = try assertTokenAnswer(try await mock.refresh(token), keys: refreshKeys)
        XCTAssertNotEqual(first["access_token"], second["access_token"], "each refresh mints a new access token")
        try assertTokenAnswer(try await mock.refresh(token), keys: refreshKeys)
    }

    func testRefresh_ReturnsTheRefreshToken_WhenKnobOn() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.refreshReturnsRefreshToken = true }
        let token = try await refreshToken(mock)
        let answer = try assertTokenAnswer(try await mock.refresh(token), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        XCTAssertEqual(answer["refresh_token"], .string(token))
    }

    func testRefresh_OmitsIDToken_WhenKnobOff() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.refreshReturnsIDToken = false }
        let token = try await refreshToken(mock)
        try assertTokenAnswer(try await mock.refresh(token), keys: ["access_token", "token_type", "expires_in"])
        // The code exchange itself still returns an id_token.
        let bobsIDToken = try await mock.webTokens(user: "bob")["id_token"]
        XCTAssertNotNil(bobsIDToken)
    }

    func testRefresh_ReturnsInvalidGrant_ForAnotherClientsToken() async throws {
        let mock = try frozenClient()
        let signIn = try jsonObject(try await mock.nativeSignIn().body)
        let code = try XCTUnwrap(signIn["authorizationCode"]?.stringValue)
        let native = try assertTokenAnswer(try await mock.redeem(code, clientID: "com.example.app", redirectURI: nil),
                                           keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let token = try XCTUnwrap(native["refresh_token"]?.stringValue)
        assertAppleError(try await mock.refresh(token, clientID: "com.example.web"), #"{"error":"invalid_grant"}"#)
        let answer = try assertTokenAnswer(try await mock.refresh(token, clientID: "com.example.app"), keys: refreshKeys)
        let claims = try await mock.verifiedClaims(answer["id_token"]?.stringValue)["aud"]
        XCTAssertEqual(claims, "com.example.app")
    }

    func testRefresh_ReturnsInvalidGrant_ForGarbageForgedOrAccessToken() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        var tampered = Array(refresh)
        tampered[5] = tampered[5] == "a" ? "b" : "a"
        for bad in ["garbage", "rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow", String(tampered),
                    try XCTUnwrap(tokens["access_token"]?.stringValue), try XCTUnwrap(tokens["id_token"]?.stringValue)] {
            assertAppleError(try await mock.refresh(bad), #"{"error":"invalid_grant"}"#)
        }
        let missing = try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()),
                                                          ("grant_type", "refresh_token")])
        assertAppleError(missing, #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try await mock.refresh(refresh), keys: refreshKeys)
    }

    func testRefresh_ReturnsInvalidGrant_AfterRevoke() async throws {
        let mock = try frozenClient()
        let token = try await refreshToken(mock)
        let bobToken = try await refreshToken(mock, user: "bob")
        assertStatus(try await mock.revoke(token), 200)
        assertAppleError(try await mock.refresh(token), #"{"error":"invalid_grant"}"#)
        try assertTokenAnswer(try await mock.refresh(bobToken), keys: refreshKeys)
    }

    func testRefresh_ReturnsInvalidRequest_AfterUserRevokedConsent() async throws {
        let mock = try frozenClient()
        let token = try await refreshToken(mock)
        let bobToken = try await refreshToken(mock, user: "bob")
        // The user ends the consent at Apple (Settings › Sign in with Apple).
        let revoked = try await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.web"}"#)
        assertStatus(revoked, 202)
        XCTAssertEqual(revoked.text, #"{"notification":1,"notifications":[1],"type":"consent-revoked","user":"alice"}"#)
        assertAppleError(try await mock.refresh(token), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try await mock.refresh(bobToken), keys: refreshKeys)
    }

    func testRefresh_ReturnsConfiguredError_AfterUserRevokedConsent_WhenKnobSaysInvalidGrant() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.revokedConsentRefreshError = "invalid_grant" }
        let token = try await refreshToken(mock)
        assertStatus(try await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.web"}"#), 202)
        assertAppleError(try await mock.refresh(token), #"{"error":"invalid_grant"}"#)
    }
}

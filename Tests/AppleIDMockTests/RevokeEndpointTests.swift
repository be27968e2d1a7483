import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /auth/revoke` (docs/apple-behaviour.md §1.4): 200 with an empty body for any token the
/// authenticated client sends; 400 JSON for client faults.
final class RevokeEndpointTests: XCTestCase {
    private func assertEmptyOK(_ response: MockAnswer, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        XCTAssertEqual(response.body, [], file: file, line: line)
        XCTAssertEqual(response.headers.fields.map { "\($0.name): \($0.value)" }, ["Server: Apple"], file: file, line: line)
    }

    func testRevoke_RefreshToken_Answers200EmptyAndKillsIt() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        assertEmptyOK(try await mock.revoke(refresh, hint: "refresh_token"))
        assertAppleError(try await mock.refresh(refresh), #"{"error":"invalid_grant"}"#)
        // Revoking again: already invalid, still 200.
        assertEmptyOK(try await mock.revoke(refresh))
    }

    func testRevoke_AccessToken_AlsoKillsTheRefreshToken() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let access = try XCTUnwrap(tokens["access_token"]?.stringValue)
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        assertEmptyOK(try await mock.revoke(access, hint: "access_token"))
        assertAppleError(try await mock.refresh(refresh), #"{"error":"invalid_grant"}"#)
    }

    func testRevoke_UnknownToken_Answers200AndChangesNothing() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        assertEmptyOK(try await mock.revoke("garbage"))
        assertEmptyOK(try await mock.revoke("rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow"))
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_AnAuthorizationCode_IsNotATokenAndRevokesNothing() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let code = try await mock.webCode()
        assertEmptyOK(try await mock.revoke(code))
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        try assertTokenAnswer(try await mock.redeem(code), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
    }

    func testRevoke_AnotherClientsToken_Answers200ButTheTokenStillWorks() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        assertEmptyOK(try await mock.revoke(refresh, clientID: "com.example.app"))
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        // Twin: its own client revokes it for real.
        assertEmptyOK(try await mock.revoke(refresh, clientID: "com.example.web"))
        assertAppleError(try await mock.refresh(refresh), #"{"error":"invalid_grant"}"#)
    }

    func testRevoke_AppToken_EndsTheGroupConsentForItsServicesIDToo() async throws {
        let mock = try frozenClient()
        let webTokens = try await mock.webTokens()
        let web = try XCTUnwrap(webTokens["refresh_token"]?.stringValue)
        let signedIn = try await mock.nativeSignIn()
        let code = try XCTUnwrap(try jsonObject(signedIn.body)["authorizationCode"]?.stringValue)
        let redeemed = try await mock.redeem(code, clientID: "com.example.app", redirectURI: nil)
        let native = try XCTUnwrap(try jsonObject(redeemed.body)["refresh_token"]?.stringValue)
        let tokens = try await mock.webTokens(user: "bob")
        let bob = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        assertEmptyOK(try await mock.revoke(native, clientID: "com.example.app"))
        assertAppleError(try await mock.refresh(web), #"{"error":"invalid_grant"}"#)
        assertAppleError(try await mock.refresh(native, clientID: "com.example.app"), #"{"error":"invalid_grant"}"#)
        try assertTokenAnswer(try await mock.refresh(bob), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_RejectsBadSecret_EmptyPayload_MissingToken() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let stranger = try P256PrivateKey.generate()
        assertAppleError(try await mock.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try await mock.secret(key: stranger)),
                                                               ("token", refresh)]), #"{"error":"invalid_client"}"#)
        assertAppleError(try await mock.postForm("/auth/revoke", [("client_id", "com.example.web"), ("token", refresh)]), #"{"error":"invalid_client"}"#)
        assertAppleError(try await mock.send("POST", "/auth/revoke"), #"{"error":"invalid_client"}"#)
        assertAppleError(try await mock.postForm("/auth/revoke", []), #"{"error":"invalid_client"}"#)
        // The refused requests revoked nothing.
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_WithoutToken_Answers200AndRevokesNothing_AsApple() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        // The library bug of sending the token as refresh_token= (§11 pitfall 18): Apple answers 200.
        for form in [[("refresh_token", refresh)], [("token", "")]] {
            let answer = try await mock.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try await mock.secret())] + form)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.body, [])
        }
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_WithoutToken_IsInvalidRequest_WhenTheStrictKnobIsOn() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.revokeRequiresToken = true }
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        assertAppleError(try await mock.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()),
                                                               ("refresh_token", refresh)]), #"{"error":"invalid_request"}"#)
        assertAppleError(try await mock.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()),
                                                               ("token", "")]), #"{"error":"invalid_request"}"#)
        // The twin: with the token where it belongs, the revocation happens.
        let revoked = try await mock.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("token", refresh)])
        XCTAssertEqual(revoked.status, 200)
        assertAppleError(try await mock.refresh(refresh), #"{"error":"invalid_grant"}"#)
    }

    func testRevoke_MigrationAccessToken_IsAcceptedAndRevokesNoUser() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let granted = try await mock.clientCredentials()
        let migration = try XCTUnwrap(try jsonObject(granted.body)["access_token"]?.stringValue)
        assertEmptyOK(try await mock.revoke(migration))
        try assertTokenAnswer(try await mock.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }
}

import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `POST /auth/revoke` (apple-reference.md §1.4): 200 with an empty body for any token the
/// authenticated client sends; 400 JSON for client faults.
final class RevokeEndpointTests: XCTestCase {
    private func assertEmptyOK(_ response: RawHTTPResponse, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        XCTAssertEqual(response.body, [], file: file, line: line)
        XCTAssertEqual(response.headers["Content-Length"], "0", file: file, line: line)
    }

    func testRevoke_RefreshToken_Answers200EmptyAndKillsIt() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let tokens = try server.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        assertEmptyOK(try server.revoke(refresh, hint: "refresh_token"))
        assertAppleError(try server.refresh(refresh), #"{"error":"invalid_grant"}"#)
        // Revoking again: already invalid, still 200.
        assertEmptyOK(try server.revoke(refresh))
    }

    func testRevoke_AccessToken_AlsoKillsTheRefreshToken() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let tokens = try server.webTokens()
        let access = try XCTUnwrap(tokens["access_token"]?.stringValue)
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        assertEmptyOK(try server.revoke(access, hint: "access_token"))
        assertAppleError(try server.refresh(refresh), #"{"error":"invalid_grant"}"#)
    }

    func testRevoke_UnknownToken_Answers200AndChangesNothing() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        assertEmptyOK(try server.revoke("garbage"))
        assertEmptyOK(try server.revoke("rfe4bae11488c423d8010b12a7d581d5d.0.sysy.K1YJnRWIo64ghcuAjrZLow"))
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_AnAuthorizationCode_IsNotATokenAndRevokesNothing() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        let code = try server.webCode()
        assertEmptyOK(try server.revoke(code))
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        try assertTokenAnswer(try server.redeem(code), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
    }

    func testRevoke_AnotherClientsToken_Answers200ButTheTokenStillWorks() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        assertEmptyOK(try server.revoke(refresh, clientID: "com.example.app"))
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        // Twin: its own client revokes it for real.
        assertEmptyOK(try server.revoke(refresh, clientID: "com.example.web"))
        assertAppleError(try server.refresh(refresh), #"{"error":"invalid_grant"}"#)
    }

    func testRevoke_AppToken_EndsTheGroupConsentForItsServicesIDToo() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let web = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        let code = try XCTUnwrap(try jsonObject(try server.nativeSignIn().body)["authorizationCode"]?.stringValue)
        let native = try XCTUnwrap(try jsonObject(try server.redeem(code, clientID: "com.example.app", redirectURI: nil).body)["refresh_token"]?.stringValue)
        let bob = try XCTUnwrap(try server.webTokens(user: "bob")["refresh_token"]?.stringValue)
        assertEmptyOK(try server.revoke(native, clientID: "com.example.app"))
        assertAppleError(try server.refresh(web), #"{"error":"invalid_grant"}"#)
        assertAppleError(try server.refresh(native, clientID: "com.example.app"), #"{"error":"invalid_grant"}"#)
        try assertTokenAnswer(try server.refresh(bob), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_RejectsBadSecret_EmptyPayload_MissingToken() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        let stranger = try P256PrivateKey.generate()
        assertAppleError(try server.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try server.secret(key: stranger)),
                                                               ("token", refresh)]), #"{"error":"invalid_client"}"#)
        assertAppleError(try server.postForm("/auth/revoke", [("client_id", "com.example.web"), ("token", refresh)]), #"{"error":"invalid_client"}"#)
        assertAppleError(try server.client().roundTrip("POST", "/auth/revoke"), #"{"error":"invalid_client"}"#)
        assertAppleError(try server.postForm("/auth/revoke", []), #"{"error":"invalid_client"}"#)
        // The refused requests revoked nothing.
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_WithoutToken_Answers200AndRevokesNothing_AsApple() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        // The library bug of sending the token as refresh_token= (§11 pitfall 18): Apple answers 200.
        for form in [[("refresh_token", refresh)], [("token", "")]] {
            let answer = try server.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try server.secret())] + form)
            XCTAssertEqual(answer.status, 200)
            XCTAssertEqual(answer.body, [])
        }
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testRevoke_WithoutToken_IsInvalidRequest_WhenTheStrictKnobIsOn() throws {
        let server = try startFrozenMock { $0.scenario.compatibility.revokeRequiresToken = true }
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        assertAppleError(try server.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try server.secret()),
                                                               ("refresh_token", refresh)]), #"{"error":"invalid_request"}"#)
        assertAppleError(try server.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try server.secret()),
                                                               ("token", "")]), #"{"error":"invalid_request"}"#)
        // The twin: with the token where it belongs, the revocation happens.
        let revoked = try server.postForm("/auth/revoke", [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("token", refresh)])
        XCTAssertEqual(revoked.status, 200)
        assertAppleError(try server.refresh(refresh), #"{"error":"invalid_grant"}"#)
    }

    func testRevoke_MigrationAccessToken_IsAcceptedAndRevokesNoUser() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        let migration = try XCTUnwrap(try jsonObject(try server.clientCredentials().body)["access_token"]?.stringValue)
        assertEmptyOK(try server.revoke(migration))
        try assertTokenAnswer(try server.refresh(refresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }
}

import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `POST /auth/token` with `authorization_code` and `client_credentials`, and the grant-type
/// rules (apple-reference.md §1.3, §2.1, §9).
final class TokenEndpointTests: XCTestCase {
    private let codeKeys = ["access_token", "token_type", "expires_in", "refresh_token", "id_token"]

    func testTokenEndpoint_ExchangesCode_InApplesShapeAndOrder() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode(nonce: "n-77")
        XCTAssertTrue(matches(code, codePattern), code)
        try server.domain.clock.advance(by: 10)
        let response = try server.redeem(code)
        let answer = try assertTokenAnswer(response, keys: codeKeys)
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        let refresh = try XCTUnwrap(answer["refresh_token"]?.stringValue)
        let idToken = try XCTUnwrap(answer["id_token"]?.stringValue)
        XCTAssertTrue(matches(access, accessTokenPattern), access)
        XCTAssertTrue(matches(refresh, refreshTokenPattern), refresh)
        XCTAssertEqual(response.text, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(refresh)","id_token":"\#(idToken)"}"#)
        // at_hash of the access token; auth_time is when the user approved, iat when redeemed;
        // no c_hash and no real_user_status after a web exchange (§4).
        XCTAssertEqual(try server.verifiedPayload(idToken),
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1700086410,"iat":1700000010,"sub":"\#(teamSub("alice"))","nonce":"n-77","at_hash":"\#(leftHalfHash(access))","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true}"#)
    }

    func testTokenEndpoint_OmitsNonce_WhenAuthorizeHadNone() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let answer = try assertTokenAnswer(try server.redeem(try server.webCode(nonce: nil)), keys: codeKeys)
        let claims = try server.verifiedClaims(answer["id_token"]?.stringValue)
        XCTAssertNil(claims["nonce"])
        XCTAssertEqual(claims["nonce_supported"], true)
        XCTAssertEqual(claims.keys, ["iss", "aud", "exp", "iat", "sub", "at_hash", "email", "email_verified", "auth_time", "nonce_supported"])
    }

    func testTokenEndpoint_ReturnsInvalidGrant_WhenCodeAlreadyRedeemed() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode()
        try assertTokenAnswer(try server.redeem(code), keys: codeKeys)
        assertAppleError(try server.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        assertAppleError(try server.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
    }

    func testTokenEndpoint_ForgetsRedeemedCodes_YetStillTellsUsedFromExpiredAndForged() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode()
        XCTAssertEqual(server.domain.state.pendingCodeCount, 1)
        try assertTokenAnswer(try server.redeem(code), keys: codeKeys)
        XCTAssertEqual(server.domain.state.pendingCodeCount, 0, "a redeemed code is not held")
        assertAppleError(try server.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        // Twin: the same shape with one character changed is not a code this mock issued.
        var forged = Array(code)
        forged[5] = forged[5] == "0" ? "1" : "0"
        assertAppleError(try server.redeem(String(forged)), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        // Once the lifetime has passed, the used code reads as expired.
        try server.domain.clock.advance(by: 300)
        assertAppleError(try server.redeem(code), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
    }

    func testTokenEndpoint_PrunesExpiredCodesThatWereNeverRedeemed() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        _ = try server.webCode()
        _ = try server.webCode()
        try server.domain.clock.advance(by: 299)
        server.domain.state.tick()
        XCTAssertEqual(server.domain.state.pendingCodeCount, 2, "still alive at 299 s")
        try server.domain.clock.advance(by: 1)
        server.domain.state.tick()
        XCTAssertEqual(server.domain.state.pendingCodeCount, 0)
    }

    func testTokenEndpoint_ReturnsInvalidGrant_WhenCodeExpired_At300Seconds() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let late = try server.webCode()
        let justInTime = try server.webCode()
        try server.domain.clock.advance(by: 299)
        try assertTokenAnswer(try server.redeem(justInTime), keys: codeKeys)
        try server.domain.clock.advance(by: 1)
        assertAppleError(try server.redeem(late), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
    }

    func testTokenEndpoint_ReturnsExpiredOrRevoked_WhenCodeUnknown() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode()
        var forged = Array(code)
        forged[1] = forged[1] == "0" ? "1" : "0"
        assertAppleError(try server.redeem(String(forged)), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        assertAppleError(try server.redeem("c0123456789abcdef0123456789abcdef.0.abcd.AAAAAAAAAAAAAAAAAAAAAA"),
                         #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        try assertTokenAnswer(try server.redeem(code), keys: codeKeys)
    }

    func testTokenEndpoint_ReturnsExpiredOrRevoked_WhenConsentRevokedBeforeRedemption() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let refresh = try XCTUnwrap(try server.webTokens()["refresh_token"]?.stringValue)
        let pending = try server.webCode()
        let bobsCode = try server.webCode(user: "bob")
        XCTAssertEqual(try server.revoke(refresh).status, 200)
        assertAppleError(try server.redeem(pending), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        try assertTokenAnswer(try server.redeem(bobsCode), keys: codeKeys)
    }

    func testTokenEndpoint_ReturnsInvalidRequest_WhenCodeMissing() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertAppleError(try server.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try server.secret()),
                                                              ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)]),
                         #"{"error":"invalid_request"}"#)
        assertAppleError(try server.redeem(""), #"{"error":"invalid_request"}"#)
    }

    func testTokenEndpoint_ReturnsClientMismatch_WhenAnotherClientOfTheTeamRedeems() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode()
        assertAppleError(try server.redeem(code, clientID: "com.example.app"),
                         #"{"error":"invalid_grant","error_description":"client_id mismatch. The code was not issued to com.example.app."}"#)
        // The failed attempt does not burn the code for its rightful client.
        try assertTokenAnswer(try server.redeem(code), keys: codeKeys)
    }

    func testTokenEndpoint_ReturnsRedirectMismatch_WhenRedirectURIDiffers() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode(redirectURI: otherWebRedirect)
        assertAppleError(try server.redeem(code, redirectURI: webRedirect),
                         #"{"error":"invalid_grant","error_description":"redirect_uri mismatch. The code was not issued to http://localhost:3000/callback."}"#)
        // A web code needs its redirect_uri.
        assertAppleError(try server.redeem(code, redirectURI: nil), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try server.redeem(code, redirectURI: otherWebRedirect), keys: codeKeys)
    }

    func testTokenEndpoint_PKCES256_RightVerifierOnly() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        // RFC 7636 Appendix B's vector.
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        XCTAssertEqual(Base64URL.encode(SHA256.hash(Array(verifier.utf8))), challenge)
        let code = try server.webCode(codeChallenge: challenge, codeChallengeMethod: "S256")
        assertAppleError(try server.redeem(code), #"{"error":"invalid_grant"}"#)
        assertAppleError(try server.redeem(code, verifier: verifier.replacingOccurrences(of: "d", with: "e")), #"{"error":"invalid_grant"}"#)
        assertAppleError(try server.redeem(code, verifier: challenge), #"{"error":"invalid_grant"}"#) // the challenge is not the verifier
        try assertTokenAnswer(try server.redeem(code, verifier: verifier), keys: codeKeys)
        assertAppleError(try server.redeem(code, verifier: verifier), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
    }

    func testTokenEndpoint_PKCEPlain_RightVerifierOnly() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let verifier = String(repeating: "v", count: 43)
        let code = try server.webCode(codeChallenge: verifier, codeChallengeMethod: "plain")
        assertAppleError(try server.redeem(code), #"{"error":"invalid_grant"}"#)
        assertAppleError(try server.redeem(code, verifier: String(repeating: "v", count: 44)), #"{"error":"invalid_grant"}"#)
        assertAppleError(try server.redeem(code, verifier: Base64URL.encode(SHA256.hash(Array(verifier.utf8)))), #"{"error":"invalid_grant"}"#)
        try assertTokenAnswer(try server.redeem(code, verifier: verifier), keys: codeKeys)
    }

    func testTokenEndpoint_IgnoresVerifier_WhenNoChallengeWasSent() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        try assertTokenAnswer(try server.redeem(try server.webCode(), verifier: String(repeating: "v", count: 43)), keys: codeKeys)
    }

    // MARK: - Grant types

    func testTokenEndpoint_ReturnsInvalidRequest_WhenGrantTypeMissing_UnsupportedForPassword() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let base = [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("scope", "user.migration")]
        assertAppleError(try server.postForm("/auth/token", base), #"{"error":"invalid_request"}"#)
        assertAppleError(try server.postForm("/auth/token", base + [("grant_type", "password")]), #"{"error":"unsupported_grant_type"}"#)
        assertAppleError(try server.postForm("/auth/token", base + [("grant_type", "")]), #"{"error":"unsupported_grant_type"}"#)
        try assertTokenAnswer(try server.postForm("/auth/token", base + [("grant_type", "client_credentials")]),
                              keys: ["access_token", "token_type", "expires_in"])
    }

    func testTokenEndpoint_ReturnsInvalidRequest_WhenFieldDuplicated() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let base = [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("grant_type", "client_credentials"),
                    ("scope", "user.migration")]
        assertAppleError(try server.postForm("/auth/token", base + [("scope", "user.migration")]), #"{"error":"invalid_request"}"#)
        assertAppleError(try server.postForm("/auth/token", base + [("client_id", "com.example.web")]), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try server.postForm("/auth/token", base), keys: ["access_token", "token_type", "expires_in"])
    }

    func testTokenEndpoint_ClientCredentials_IssuesMigrationToken_OnlyForUserMigrationScope() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let response = try server.clientCredentials()
        let answer = try assertTokenAnswer(response, keys: ["access_token", "token_type", "expires_in"])
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        XCTAssertTrue(matches(access, accessTokenPattern), access)
        XCTAssertEqual(response.text, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600}"#)
        assertAppleError(try server.clientCredentials(scope: "name"), #"{"error":"invalid_scope"}"#)
        assertAppleError(try server.clientCredentials(scope: "user.migration name"), #"{"error":"invalid_scope"}"#)
        assertAppleError(try server.clientCredentials(scope: nil), #"{"error":"invalid_scope"}"#)
        // The migration token is not a refresh token.
        assertAppleError(try server.refresh(access), #"{"error":"invalid_grant"}"#)
    }

    func testTokenEndpoint_ReturnsInvalidClient_ForAJSONBody_InvalidRequest_ForOtherNonFormBodies() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let code = try server.webCode()
        let fields: [(String, String)] = [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("code", code),
                                          ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)]
        let json = JSONWriter.compact(.object(JSONObject(fields.map { ($0.0, JSONValue.string($0.1)) })))
        func post(_ contentType: String?, _ body: [UInt8]) throws -> RawHTTPResponse {
            try server.client().roundTrip("POST", "/auth/token", headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body)
        }
        // A JSON body: invalid_client as observed at Apple (apple-reference.md §1.3 [O]), by its
        // label or, unlabelled or labelled as text, by being a JSON object.
        assertAppleError(try post("application/json", json), #"{"error":"invalid_client"}"#)
        assertAppleError(try post("application/json; charset=utf-8", json), #"{"error":"invalid_client"}"#)
        assertAppleError(try post("text/plain", json), #"{"error":"invalid_client"}"#)
        assertAppleError(try post(nil, json), #"{"error":"invalid_client"}"#)
        // Any other body that is not a form: TN3107's invalid_request for a bad content type (§2.1 [D]).
        let text = Array(HTTPForm.encode(fields).utf8)
        assertAppleError(try post("text/plain", text), #"{"error":"invalid_request"}"#)
        assertAppleError(try post("text/plain", Array("[1, 2]".utf8)), #"{"error":"invalid_request"}"#)
        assertAppleError(try post("multipart/form-data; boundary=x", text), #"{"error":"invalid_request"}"#)
        assertAppleError(try post(nil, text), #"{"error":"invalid_request"}"#)
        // The accepted twin: the same fields as a form redeem the code (the refusals spent nothing).
        try assertTokenAnswer(try post("application/x-www-form-urlencoded", text), keys: codeKeys)
    }
}

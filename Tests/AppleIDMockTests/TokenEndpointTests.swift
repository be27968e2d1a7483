import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /auth/token` with `authorization_code` and `client_credentials`, and the grant-type
/// rules (docs/apple-behaviour.md §1.3, §2.1, §9).
final class TokenEndpointTests: XCTestCase {
    private let codeKeys = ["access_token", "token_type", "expires_in", "refresh_token", "id_token"]

    func testTokenEndpoint_ExchangesCode_InApplesShapeAndOrder() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode(nonce: "n-77")
        XCTAssertTrue(matches(code, codePattern), code)
        try await mock.advanceClock(by: 10)
        let response = try await mock.redeem(code)
        let answer = try assertTokenAnswer(response, keys: codeKeys)
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        let refresh = try XCTUnwrap(answer["refresh_token"]?.stringValue)
        let idToken = try XCTUnwrap(answer["id_token"]?.stringValue)
        XCTAssertTrue(matches(access, accessTokenPattern), access)
        XCTAssertTrue(matches(refresh, refreshTokenPattern), refresh)
        XCTAssertEqual(response.text, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(refresh)","id_token":"\#(idToken)"}"#)
        // at_hash of the access token; auth_time is when the user approved, iat when redeemed;
        // no c_hash and no real_user_status after a web exchange (§4).
        let payload = try await mock.verifiedPayload(idToken)
        XCTAssertEqual(payload,
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1700086410,"iat":1700000010,"sub":"\#(teamSub("alice"))","nonce":"n-77","at_hash":"\#(leftHalfHash(access))","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true}"#)
    }

    func testTokenEndpoint_OmitsNonce_WhenAuthorizeHadNone() async throws {
        let mock = try frozenClient()
        let answer = try assertTokenAnswer(try await mock.redeem(try await mock.webCode(nonce: nil)), keys: codeKeys)
        let claims = try await mock.verifiedClaims(answer["id_token"]?.stringValue)
        XCTAssertNil(claims["nonce"])
        XCTAssertEqual(claims["nonce_supported"], true)
        XCTAssertEqual(claims.keys, ["iss", "aud", "exp", "iat", "sub", "at_hash", "email", "email_verified", "auth_time", "nonce_supported"])
    }

    func testTokenEndpoint_ReturnsInvalidGrant_WhenCodeAlreadyRedeemed() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode()
        try assertTokenAnswer(try await mock.redeem(code), keys: codeKeys)
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
    }

    func testTokenEndpoint_ForgetsRedeemedCodes_YetStillTellsUsedFromExpiredAndForged() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode()
        XCTAssertEqual(pendingCodeCount(mock), 1)
        try assertTokenAnswer(try await mock.redeem(code), keys: codeKeys)
        XCTAssertEqual(pendingCodeCount(mock), 0, "a redeemed code is not held")
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        // Twin: the same shape with one character changed is not a code this mock issued.
        var forged = Array(code)
        forged[5] = forged[5] == "0" ? "1" : "0"
        assertAppleError(try await mock.redeem(String(forged)), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        // Once the lifetime has passed, the used code reads as expired.
        try await mock.advanceClock(by: 300)
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
    }

    func testTokenEndpoint_PrunesExpiredCodesThatWereNeverRedeemed() async throws {
        let mock = try frozenClient()
        _ = try await mock.webCode()
        _ = try await mock.webCode()
        try await mock.advanceClock(by: 299)
        runTick(mock)
        XCTAssertEqual(pendingCodeCount(mock), 2, "still alive at 299 s")
        try await mock.advanceClock(by: 1)
        runTick(mock)
        XCTAssertEqual(pendingCodeCount(mock), 0)
    }

    func testTokenEndpoint_ReturnsInvalidGrant_WhenCodeExpired_At300Seconds() async throws {
        let mock = try frozenClient()
        let late = try await mock.webCode()
        let justInTime = try await mock.webCode()
        try await mock.advanceClock(by: 299)
        try assertTokenAnswer(try await mock.redeem(justInTime), keys: codeKeys)
        try await mock.advanceClock(by: 1)
        assertAppleError(try await mock.redeem(late), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
    }

    func testTokenEndpoint_ReturnsExpiredOrRevoked_WhenCodeUnknown() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode()
        var forged = Array(code)
        forged[1] = forged[1] == "0" ? "1" : "0"
        assertAppleError(try await mock.redeem(String(forged)), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        assertAppleError(try await mock.redeem("c0123456789abcdef0123456789abcdef.0.abcd.AAAAAAAAAAAAAAAAAAAAAA"),
                         #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        try assertTokenAnswer(try await mock.redeem(code), keys: codeKeys)
    }

    func testTokenEndpoint_ReturnsExpiredOrRevoked_WhenConsentRevokedBeforeRedemption() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let pending = try await mock.webCode()
        let bobsCode = try await mock.webCode(user: "bob")
        assertStatus(try await mock.revoke(refresh), 200)
        assertAppleError(try await mock.redeem(pending), #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#)
        try assertTokenAnswer(try await mock.redeem(bobsCode), keys: codeKeys)
    }

    func testTokenEndpoint_ReturnsInvalidRequest_WhenCodeMissing() async throws {
        let mock = try frozenClient()
        assertAppleError(try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()),
                                                              ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)]),
                         #"{"error":"invalid_request"}"#)
        assertAppleError(try await mock.redeem(""), #"{"error":"invalid_request"}"#)
    }

    func testTokenEndpoint_ReturnsClientMismatch_WhenAnotherClientOfTheTeamRedeems() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode()
        assertAppleError(try await mock.redeem(code, clientID: "com.example.app"),
                         #"{"error":"invalid_grant","error_description":"client_id mismatch. The code was not issued to com.example.app."}"#)
        // The failed attempt does not burn the code for its rightful client.
        try assertTokenAnswer(try await mock.redeem(code), keys: codeKeys)
    }

    func testTokenEndpoint_ReturnsRedirectMismatch_WhenRedirectURIDiffers() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode(redirectURI: otherWebRedirect)
        assertAppleError(try await mock.redeem(code, redirectURI: webRedirect),
                         #"{"error":"invalid_grant","error_description":"redirect_uri mismatch. The code was not issued to http://localhost:3000/callback."}"#)
        // A web code needs its redirect_uri.
        assertAppleError(try await mock.redeem(code, redirectURI: nil), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try await mock.redeem(code, redirectURI: otherWebRedirect), keys: codeKeys)
    }

    func testTokenEndpoint_PKCES256_RightVerifierOnly() async throws {
        let mock = try frozenClient()
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        // RFC 7636 Appendix B's vector.
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        XCTAssertEqual(Base64URL.encode(SHA256.hash(Array(verifier.utf8))), challenge)
        let code = try await mock.webCode(codeChallenge: challenge, codeChallengeMethod: "S256")
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant"}"#)
        assertAppleError(try await mock.redeem(code, verifier: verifier.replacingOccurrences(of: "d", with: "e")), #"{"error":"invalid_grant"}"#)
        assertAppleError(try await mock.redeem(code, verifier: challenge), #"{"error":"invalid_grant"}"#) // the challenge is not the verifier
        try assertTokenAnswer(try await mock.redeem(code, verifier: verifier), keys: codeKeys)
        assertAppleError(try await mock.redeem(code, verifier: verifier), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
    }

    func testTokenEndpoint_PKCEPlain_RightVerifierOnly() async throws {
        let mock = try frozenClient()
        let verifier = String(repeating: "v", count: 43)
        let code = try await mock.webCode(codeChallenge: verifier, codeChallengeMethod: "plain")
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant"}"#)
        assertAppleError(try await mock.redeem(code, verifier: String(repeating: "v", count: 44)), #"{"error":"invalid_grant"}"#)
        assertAppleError(try await mock.redeem(code, verifier: Base64URL.encode(SHA256.hash(Array(verifier.utf8)))), #"{"error":"invalid_grant"}"#)
        try assertTokenAnswer(try await mock.redeem(code, verifier: verifier), keys: codeKeys)
    }

    func testTokenEndpoint_IgnoresVerifier_WhenNoChallengeWasSent() async throws {
        let mock = try frozenClient()
        try assertTokenAnswer(try await mock.redeem(try await mock.webCode(), verifier: String(repeating: "v", count: 43)), keys: codeKeys)
    }

    // MARK: - Grant types

    func testTokenEndpoint_ReturnsInvalidRequest_WhenGrantTypeMissing_UnsupportedForPassword() async throws {
        let mock = try frozenClient()
        let base = [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("scope", "user.migration")]
        assertAppleError(try await mock.postForm("/auth/token", base), #"{"error":"invalid_request"}"#)
        assertAppleError(try await mock.postForm("/auth/token", base + [("grant_type", "password")]), #"{"error":"unsupported_grant_type"}"#)
        assertAppleError(try await mock.postForm("/auth/token", base + [("grant_type", "")]), #"{"error":"unsupported_grant_type"}"#)
        try assertTokenAnswer(try await mock.postForm("/auth/token", base + [("grant_type", "client_credentials")]),
                              keys: ["access_token", "token_type", "expires_in"])
    }

    func testTokenEndpoint_RefreshTokenSentAsCode_IsUnsupportedGrantType_AsApplesAnswer() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let base = [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("grant_type", "refresh_token")]
        assertAppleError(try await mock.postForm("/auth/token", base + [("code", refresh)]), #"{"error":"unsupported_grant_type"}"#)
        assertAppleError(try await mock.postForm("/auth/token", base + [("code", "")]), #"{"error":"invalid_request"}"#)
        assertAppleError(try await mock.postForm("/auth/token", base), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try await mock.postForm("/auth/token", base + [("refresh_token", refresh)]), keys: ["access_token", "token_type", "expires_in", "id_token"])
    }

    func testTokenEndpoint_AKeyConfiguredWithAnotherPrimaryAppID_SignsNoSecretForThisGroup() async throws {
        for (primary, expected) in [("com.example.other", 400), ("com.example.app", 200)] {
            let mock = try frozenClient { configuration in
                configuration.scenario.teams[0].clients.append(Scenario.Client(clientID: "com.example.other", kind: .appID))
                configuration.scenario.teams[0].developerKeys[0].primaryAppID = primary
            }
            let answer = try await mock.clientCredentials()
            XCTAssertEqual(answer.status, expected, "\(primary): \(answer.text)")
            if expected == 400 { XCTAssertEqual(answer.text, #"{"error":"invalid_client"}"#) }
        }
    }

    func testTokenEndpoint_ReturnsInvalidRequest_WhenFieldDuplicated() async throws {
        let mock = try frozenClient()
        let base = [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("grant_type", "client_credentials"),
                    ("scope", "user.migration")]
        assertAppleError(try await mock.postForm("/auth/token", base + [("scope", "user.migration")]), #"{"error":"invalid_request"}"#)
        assertAppleError(try await mock.postForm("/auth/token", base + [("client_id", "com.example.web")]), #"{"error":"invalid_request"}"#)
        try assertTokenAnswer(try await mock.postForm("/auth/token", base), keys: ["access_token", "token_type", "expires_in"])
    }

    func testTokenEndpoint_ClientCredentials_IssuesMigrationToken_OnlyForUserMigrationScope() async throws {
        let mock = try frozenClient()
        let response = try await mock.clientCredentials()
        let answer = try assertTokenAnswer(response, keys: ["access_token", "token_type", "expires_in"])
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        XCTAssertTrue(matches(access, accessTokenPattern), access)
        XCTAssertEqual(response.text, #"{"access_token":"\#(access)","token_type":"Bearer","expires_in":3600}"#)
        assertAppleError(try await mock.clientCredentials(scope: "name"), #"{"error":"invalid_scope"}"#)
        assertAppleError(try await mock.clientCredentials(scope: "user.migration name"), #"{"error":"invalid_scope"}"#)
        assertAppleError(try await mock.clientCredentials(scope: nil), #"{"error":"invalid_scope"}"#)
        // The migration token is not a refresh token.
        assertAppleError(try await mock.refresh(access), #"{"error":"invalid_grant"}"#)
    }

    func testTokenEndpoint_ReturnsInvalidClient_ForAJSONBody_InvalidRequest_ForOtherNonFormBodies() async throws {
        let mock = try frozenClient()
        let code = try await mock.webCode()
        let fields: [(String, String)] = [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("code", code),
                                          ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)]
        let json = JSONWriter.compact(.object(JSONObject(fields.map { ($0.0, JSONValue.string($0.1)) })))
        func post(_ contentType: String?, _ body: [UInt8]) async throws -> MockAnswer {
            try await mock.send("POST", "/auth/token", headers: contentType.map { [("Content-Type", $0)] } ?? [], body: body)
        }
        // A JSON body: invalid_client as observed at Apple (docs/apple-behaviour.md §1.3 [O]), by its
        // label or, unlabelled or labelled as text, by being a JSON object.
        assertAppleError(try await post("application/json", json), #"{"error":"invalid_client"}"#)
        assertAppleError(try await post("application/json; charset=utf-8", json), #"{"error":"invalid_client"}"#)
        assertAppleError(try await post("text/plain", json), #"{"error":"invalid_client"}"#)
        assertAppleError(try await post(nil, json), #"{"error":"invalid_client"}"#)
        // Any other body that is not a form: TN3107's invalid_request for a bad content type (§2.1 [D]).
        let text = Array(HTTPForm.encode(fields).utf8)
        assertAppleError(try await post("text/plain", text), #"{"error":"invalid_request"}"#)
        assertAppleError(try await post("text/plain", Array("[1, 2]".utf8)), #"{"error":"invalid_request"}"#)
        assertAppleError(try await post("multipart/form-data; boundary=x", text), #"{"error":"invalid_request"}"#)
        assertAppleError(try await post(nil, text), #"{"error":"invalid_request"}"#)
        // The accepted twin: the same fields as a form redeem the code (the refusals spent nothing).
        try assertTokenAnswer(try await post("application/x-www-form-urlencoded", text), keys: codeKeys)
    }
}

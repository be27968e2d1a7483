import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// Issue 18 point 7: every refusal of Apple's endpoints writes one line saying why, while
/// Apple's answer stays byte for byte what it was; accepted twins write nothing at `info`.
final class RefusalReasonTests: XCTestCase {
    private let capture = LogCapture()
    private var loud: (any MockClient)!
    private var quiet: (any MockClient)!

    override func setUpWithError() throws {
        loud = try frozenClient { [capture] in $0.log = capture.sink }
        quiet = try frozenClient { $0.logLevel = .error; $0.log = { line in XCTFail("logged at error level: \(line)") } }
    }

    /// Runs `exchange` on a mock logging at `info` and on one logging only errors; fails unless
    /// the answers are identical (status, header fields, body), the logging mock wrote exactly `lines`, and the body is
    /// `body` (when given). Returns the answer.
    @discardableResult
    private func assertLogged(_ lines: [String], body: String? = nil, file: StaticString = #filePath, line: UInt = #line,
                              _ exchange: (any MockClient) async throws -> MockAnswer) async throws -> MockAnswer {
        _ = capture.take()
        let answer = try await exchange(loud)
        XCTAssertEqual(capture.take(), lines, file: file, line: line)
        let unlogged = try await exchange(quiet)
        XCTAssertEqual(answer.status, unlogged.status, "the log changed Apple's answer", file: file, line: line)
        XCTAssertEqual(answer.headers, unlogged.headers, "the log changed Apple's answer", file: file, line: line)
        XCTAssertEqual(answer.text, unlogged.text, "the log changed Apple's answer", file: file, line: line)
        if let body { assertAppleError(answer, body, file: file, line: line) }
        return answer
    }

    private func credentials(_ mock: any MockClient, clientID: String = "com.example.web", secret: String) async throws -> MockAnswer {
        try await mock.postForm("/auth/token", [("client_id", clientID), ("client_secret", secret), ("grant_type", "client_credentials"),
                                            ("scope", "user.migration")])
    }

    private func assertAccepted(file: StaticString = #filePath, line: UInt = #line, _ exchange: (any MockClient) async throws -> MockAnswer) async throws {
        _ = capture.take()
        let answer = try await exchange(loud)
        XCTAssertEqual(answer.status, 200, answer.text, file: file, line: line)
        XCTAssertEqual(capture.take(), [], file: file, line: line)
    }

    func testTokenEndpoint_LogsReason_WhenClientSecretExpired() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret expired at mock time 2023-11-14T22:13:20Z (exp 2023-11-14T21:13:20Z)"],
                         body: #"{"error":"invalid_client"}"#) { try await credentials($0, secret: try await $0.secret(issuedAt: frozenNow - 7200)) }
        try await assertAccepted { try await credentials($0, secret: try await $0.secret(issuedAt: frozenNow - 3599)) }
    }

    func testTokenEndpoint_LogsReason_WhenClientSecretIssuedInTheFutureOrTooLong() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret iat 2023-11-14T22:13:21Z is in the future at mock time 2023-11-14T22:13:20Z"],
                         body: #"{"error":"invalid_client"}"#) { try await credentials($0, secret: try await $0.secret(issuedAt: frozenNow + 1)) }
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret exp 2024-05-15T12:43:21Z is 15777001 s after mock time "
                          + "2023-11-14T22:13:20Z, over Apple's limit of 15777000 s"],
                         body: #"{"error":"invalid_client"}"#) { try await credentials($0, secret: try await $0.secret(lifetime: 15_777_001)) }
        try await assertAccepted { try await credentials($0, secret: try await $0.secret(lifetime: 15_777_000)) }
    }

    func testTokenEndpoint_LogsReason_WhenClientSecretSubjectIsAnotherClient() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret sub is com.example.web but client_id is com.example.app"],
                         body: #"{"error":"invalid_client"}"#) { try await credentials($0, clientID: "com.example.app", secret: try await $0.secret("com.example.web")) }
        try await assertAccepted { try await credentials($0, clientID: "com.example.app", secret: try await $0.secret("com.example.app")) }
    }

    func testTokenEndpoint_LogsReason_WhenClientSecretKeyAudienceOrIssuerIsWrong() async throws {
        let otherKey = try P256PrivateKey.generate()
        let invalidClient = #"{"error":"invalid_client"}"#
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret kid MOCKKEY009 is not a developer key of team MOCKTEAM01"],
                         body: invalidClient) { try await credentials($0, secret: try await $0.secret(keyID: "MOCKKEY009")) }
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret signature does not verify with key MOCKKEY001 of team MOCKTEAM01"],
                         body: invalidClient) { try await credentials($0, secret: try await $0.secret(key: otherKey)) }
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret aud is https://appleid.example but must be https://appleid.apple.com"],
                         body: invalidClient) { try await credentials($0, secret: try await $0.secret(audience: "https://appleid.example")) }
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret iss is MOCKTEAM02 but client_id com.example.web belongs to team MOCKTEAM01"],
                         body: invalidClient) { try await credentials($0, secret: try await $0.secret(teamID: "MOCKTEAM02")) }
        try await assertLogged(["refused POST /auth/token: invalid_client — client_secret is not a JWT (malformed JWS: expected 3 segments, found 1)"],
                         body: invalidClient) { try await credentials($0, secret: "not-a-jwt") }
        try await assertAccepted { try await credentials($0, secret: try await $0.secret()) }
    }

    func testTokenEndpoint_LogsReason_WhenCodeWentToAnotherRedirectURI() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_grant — code issued to another redirect_uri (issued to \(webRedirect), got https://b.example/cb)"],
                         body: #"{"error":"invalid_grant","error_description":"redirect_uri mismatch. The code was not issued to https://b.example/cb."}"#) {
            try await $0.redeem(try await $0.webCode(), redirectURI: "https://b.example/cb")
        }
        try await assertAccepted { try await $0.redeem(try await $0.webCode()) }
    }

    func testTokenEndpoint_LogsReason_WhenCodeAlreadyUsed() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_grant — code already used"],
                         body: #"{"error":"invalid_grant","error_description":"The code has already been used."}"#) { mock in
            let code = try await mock.webCode()
            let redeemed = try await mock.redeem(code)
            XCTAssertEqual(redeemed.status, 200) // the accepted twin: no line
            return try await mock.redeem(code)
        }
    }

    func testTokenEndpoint_LogsReason_WhenCodeExpired() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_grant — code expired at mock time 2023-11-14T22:18:20Z (exp 2023-11-14T22:18:20Z)"],
                         body: #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#) { mock in
            let code = try await mock.webCode()
            try await mock.advanceClock(by: 300)
            return try await mock.redeem(code, secret: try await mock.secret())
        }
    }

    func testTokenEndpoint_LogsReason_WhenPKCEVerifierMismatchesOrIsMissing() async throws {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        try await assertLogged(["refused POST /auth/token: invalid_grant — code_verifier does not match the code_challenge (S256)",
                          "refused POST /auth/token: invalid_grant — code_verifier missing; the code was issued with a code_challenge"],
                         body: #"{"error":"invalid_grant"}"#) { mock in
            let code = try await mock.webCode(codeChallenge: challenge, codeChallengeMethod: "S256")
            assertAppleError(try await mock.redeem(code, verifier: String(verifier.reversed())), #"{"error":"invalid_grant"}"#)
            return try await mock.redeem(code)
        }
        try await assertAccepted { mock in
            try await mock.redeem(try await mock.webCode(codeChallenge: challenge, codeChallengeMethod: "S256"), verifier: verifier)
        }
    }

    func testTokenEndpoint_LogsReason_WhenGrantTypeUnsupportedOrMissing() async throws {
        try await assertLogged(["refused POST /auth/token: unsupported_grant_type — grant_type password is not authorization_code, refresh_token or client_credentials"],
                         body: #"{"error":"unsupported_grant_type"}"#) { mock in
            try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("grant_type", "password")])
        }
        try await assertLogged(["refused POST /auth/token: invalid_request — grant_type missing"], body: #"{"error":"invalid_request"}"#) { mock in
            try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret())])
        }
        try await assertAccepted { try await credentials($0, secret: try await $0.secret()) }
    }

    func testTokenEndpoint_LogsReason_WhenBodyIsNotAForm() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_client — body is JSON (Content-Type application/json), not application/x-www-form-urlencoded"],
                         body: #"{"error":"invalid_client"}"#) { try await $0.postJSON("/auth/token", #"{"grant_type":"client_credentials"}"#) }
        try await assertLogged(["refused POST /auth/token: invalid_request — body has Content-Type text/plain, not application/x-www-form-urlencoded"],
                         body: #"{"error":"invalid_request"}"#) {
            try await $0.send("POST", "/auth/token", headers: [("Content-Type", "text/plain")], body: Array("grant_type=client_credentials".utf8))
        }
    }

    func testTokenEndpoint_LogsReason_WhenRefreshTokenUnknownOrConsentRevoked() async throws {
        try await assertLogged(["refused POST /auth/token: invalid_grant — refresh_token unknown: not a refresh token this mock issued"],
                         body: #"{"error":"invalid_grant"}"#) { try await $0.refresh("r.not-a-token") }
        try await assertLogged(["refused POST /auth/token: invalid_grant — refresh_token was revoked through POST /auth/revoke"],
                         body: #"{"error":"invalid_grant"}"#) { mock in
            let tokens = try await mock.webTokens()
            let token = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
            assertStatus(try await mock.revoke(token), 200)
            return try await mock.refresh(token)
        }
        try await assertAccepted { mock in
            let tokens = try await mock.webTokens()
            return try await mock.refresh(try XCTUnwrap(tokens["refresh_token"]?.stringValue))
        }
    }

    func testAuthorizeEndpoint_LogsReason_WhenClientOrRedirectUnknown_PageUnchanged() async throws {
        let base = [("response_type", "code"), ("response_mode", "form_post"), ("scope", "name email")]
        let page = try await assertLogged(["refused GET /auth/authorize: invalid_client — client_id com.example.nope is not a client in the scenario"]) {
            try await $0.authorizePage([("client_id", "com.example.nope"), ("redirect_uri", webRedirect)] + base)
        }
        assertAuthorizeErrorPage(page, code: "invalid_client", message: "Invalid client id or web redirect url.")
        try await assertLogged(["refused GET /auth/authorize: invalid_request — redirect_uri https://evil.example/cb is not registered for com.example.web"
                          + " (registered: https://app.example.com/callback \(webRedirect))"]) {
            try await $0.authorizePage([("client_id", "com.example.web"), ("redirect_uri", "https://evil.example/cb")] + base)
        }
        try await assertLogged(["refused GET /auth/authorize: invalid_request — client_id com.example.app is an App ID; web sign-in needs a Services ID"]) {
            try await $0.authorizePage([("client_id", "com.example.app"), ("redirect_uri", webRedirect)] + base)
        }
        // The twin, reached as the browser would reach a mock on another site than the app's.
        try await assertAccepted {
            try await $0.send("GET", "/auth/authorize?" + HTTPForm.encode([("client_id", "com.example.web"), ("redirect_uri", webRedirect)] + base),
                              headers: [("Host", "127.0.0.1:8080")])
        }
    }

    func testAuthorizeEndpoint_NoticesAFormPostCallbackOnTheMocksOwnSite_OncePerClientAndReturnURL_PageUnchanged() async throws {
        let formPost = [("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", "code"), ("response_mode", "form_post")]
        let target = "/auth/authorize?" + HTTPForm.encode(formPost)
        let notice = "notice GET /auth/authorize: the redirect_uri \(webRedirect) of com.example.web is the same site as this mock (http://localhost:8080): "
            + "the browser sends its SameSite=Lax cookies on this form_post, which it withholds from the cross-site POST of Apple, "
            + "so a missing-cookie bug passes here; reach the mock under another site (docs/frontend-tests.md, Catch the cookie bug)"
        // Twin first: the same request in another response mode says nothing (no cross-site POST).
        let query = "/auth/authorize?" + HTTPForm.encode(formPost.map { $0.0 == "response_mode" ? ($0.0, "query") : $0 })
        try await assertAccepted { try await $0.send("GET", query, headers: [("Host", "localhost:8080")]) }
        // localhost:8080 and localhost:3000 are one site (ports do not count): once, then never again.
        // (Not assertLogged: each consent page carries its own mock_page value, so two pages differ by it.)
        _ = capture.take()
        let page = try await loud.send("GET", target, headers: [("Host", "localhost:8080")])
        XCTAssertEqual(capture.take(), [notice])
        let unlogged = try await quiet.send("GET", target, headers: [("Host", "localhost:8080")])
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.headers, unlogged.headers, "the notice changed the answer")
        XCTAssertEqual(page.text.count, unlogged.text.count, "the notice changed the answer")
        XCTAssertTrue(page.text.contains(#"id="consent""#))
        try await assertAccepted { try await $0.send("GET", target, headers: [("Host", "localhost:8080")]) }
        // Twins: the mock on another site (an IP address, a name under localhost) says nothing.
        for host in ["127.0.0.1:8080", "appleid.localhost:8080"] {
            try await assertAccepted { try await $0.send("GET", target, headers: [("Host", host)]) }
        }
    }

    func testRevokeAndMigration_LogReasons() async throws {
        try await assertLogged(["refused POST /auth/revoke: invalid_client — client_id com.example.nope is not a client in the scenario"],
                         body: #"{"error":"invalid_client"}"#) { try await $0.revoke("t", clientID: "com.example.nope") }
        try await assertLogged(["refused POST /auth/usermigrationinfo: invalid_request — Authorization: Bearer header missing"],
                         body: #"{"error":"invalid_request"}"#) { mock in
            try await mock.postForm("/auth/usermigrationinfo", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()),
                                                            ("sub", "x"), ("target", "MOCKTEAM02")])
        }
        try await assertAccepted { try await $0.revoke("t") }
    }

    func testRefusalLine_EscapesControlCharactersAndIsBounded() async throws {
        let hostile = "evil\n\u{1B}[31mappleid-mock: forged" + String(repeating: "x", count: 5000)
        try await assertLogged(["refused POST /auth/token: unsupported_grant_type — grant_type evil\\n\\u{1b}[31mappleid-mock: forged"
                          + String(repeating: "x", count: 84) + "… is not authorization_code, refresh_token or client_credentials"],
                         body: #"{"error":"unsupported_grant_type"}"#) { mock in
            try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()), ("grant_type", hostile)])
        }
    }

    func testRefusalLine_NeverCarriesTheClientSecret() async throws {
        let secret = try await loud.secret("com.example.web")
        _ = capture.take()
        assertAppleError(try await credentials(loud, clientID: "com.example.app", secret: secret), #"{"error":"invalid_client"}"#)
        assertAppleError(try await credentials(loud, secret: secret + "x"), #"{"error":"invalid_client"}"#)
        let lines = capture.take()
        XCTAssertEqual(lines.count, 2)
        let signature = String(secret.split(separator: ".")[2])
        XCTAssertFalse(lines.contains { $0.contains(signature) || $0.contains(secret) }, "\(lines)")
    }

    func testLogLevel_DebugLogsAnsweredRequests_WarnLogsNoRefusal() async throws {
        let debugLog = LogCapture()
        let debug = try frozenClient { $0.logLevel = .debug; $0.log = debugLog.sink }
        let secret = try await debug.secret()
        _ = debugLog.take() // the clock read that minted it
        assertStatus(try await credentials(debug, secret: secret), 200)
        let keys = try await debug.get("/auth/keys")
        XCTAssertEqual(keys.status, 200)
        assertStatus(try await credentials(debug, clientID: "com.example.app", secret: secret), 400)
        let fetched = try await debug.get("/nowhere")
        XCTAssertEqual(fetched.status, 404)
        XCTAssertEqual(debugLog.take(), ["answered POST /auth/token: 200", "answered GET /auth/keys: 200",
                                         "refused POST /auth/token: invalid_client — client_secret sub is com.example.web but client_id is com.example.app",
                                         "answered GET /nowhere: 404"])
        let warnLog = LogCapture()
        let warn = try frozenClient { $0.logLevel = .warn; $0.log = warnLog.sink }
        assertAppleError(try await credentials(warn, clientID: "com.example.app", secret: try await warn.secret()), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(warnLog.take(), [])
    }

    func testStartForTesting_HandsRefusalLinesToItsLogClosure() async throws {
        let log = LogCapture()
        // Live: the public entry point a backend's suite starts the mock with.
        let server = try AppleIDMockServer.startForTesting(keysDirectory: repositoryRoot + "/Keys/signing", log: log.sink) {
            $0.scenario.clock = .init(start: frozenNow, frozen: true)
        }
        let mock = LiveClient(server: server)
        addTeardownBlock { await mock.stop() }
        assertAppleError(try await credentials(mock, secret: try await mock.secret(issuedAt: frozenNow - 7200)), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(log.take(), ["refused POST /auth/token: invalid_client — client_secret expired at mock time 2023-11-14T22:13:20Z (exp 2023-11-14T21:13:20Z)"])
    }

    func testOAuthError_EqualityAndBodyIgnoreTheReason() {
        let refused = OAuthError.invalidClient.because("client_secret missing")
        XCTAssertEqual(refused, .invalidClient)
        XCTAssertEqual(refused.reason, "client_secret missing")
        XCTAssertEqual(String(decoding: JSONWriter.compact(refused.json), as: UTF8.self), #"{"error":"invalid_client"}"#)
        XCTAssertNotEqual(refused, .invalidGrant.because("client_secret missing"))
    }
}

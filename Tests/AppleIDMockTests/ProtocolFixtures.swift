import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

// Shared factories for the Sign in with Apple protocol tests, with everything defaulted (house
// style rule 13). The `AppleIDMockServer` helpers here talk to a live mock over a real socket
// through `RawHTTPClient` (the live suites); `MockClient+Apple.swift` has the same helpers over
// `MockClient`, for either mode.

/// The instant the protocol tests freeze the mock clock at.
let frozenNow: Int64 = 1_700_000_000

/// The default team's Sign in with Apple key (`Keys/AuthKey_MOCKKEY001.p8`, test-only).
let mockDeveloperKey: P256PrivateKey = {
    let pem = try! String(contentsOfFile: repositoryRoot + "/Keys/AuthKey_MOCKKEY001.p8", encoding: .utf8)
    return try! P256PrivateKey(pem: pem)
}()

/// The web client's registered return URLs in the built-in scenario.
let webRedirect = "http://localhost:3000/callback"
let otherWebRedirect = "https://app.example.com/callback"

/// Apple's opaque token and code shapes (docs/apple-behaviour.md §1.2, §1.3).
let accessTokenPattern = #"^a[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}$"#
let refreshTokenPattern = #"^r[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}$"#
let codePattern = #"^c[0-9a-f]{32}\.0\.[a-z]{4}\.[A-Za-z0-9_-]{22}$"#
/// A relay address on the domain Apple issues them on today (docs/apple-behaviour.md §6).
let relayPattern = #"^[a-z0-9]{10}@privaterelay\.appleid\.com$"#

extension Identity {
    /// The relay address a user of today's default scenario gets: on `privaterelay.appleid.com`.
    static func relayAddress(teamID: String, userID: String) -> String {
        relayAddress(teamID: teamID, userID: userID, domain: .issued)
    }
}

/// Starts the mock with the clock frozen at `frozenNow`, then applies `adjust`.
func startFrozenMock(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> AppleIDMockServer {
    try startMock { configuration in
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        adjust(&configuration)
    }
}

/// Whether `text` matches the regular expression `pattern` as a whole.
func matches(_ text: String?, _ pattern: String) -> Bool {
    guard let text else { return false }
    return text.range(of: pattern, options: .regularExpression) != nil
}

/// OpenID Connect's half hash (base64url of the left half of SHA-256), computed here
/// independently of the mock's own helper.
func leftHalfHash(_ value: String) -> String {
    Base64URL.encode(SHA256.hash(Array(value.utf8))[0..<16])
}

/// Replaces HTML's five escapes.
func htmlUnescape(_ text: String) -> String {
    text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
        .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&amp;", with: "&")
}

/// The hidden inputs of an HTML page, in order, unescaped.
func hiddenFields(_ html: String) -> [(String, String)] {
    let regex = try! NSRegularExpression(pattern: #"<input type="hidden" name="([^"]*)" value="([^"]*)">"#)
    let ns = html as NSString
    return regex.matches(in: html, range: NSRange(location: 0, length: ns.length)).map { match in
        (htmlUnescape(ns.substring(with: match.range(at: 1))), htmlUnescape(ns.substring(with: match.range(at: 2))))
    }
}

/// The first capture of `pattern` in `text`.
func capture(_ pattern: String, in text: String) -> String? {
    let regex = try! NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators])
    let ns = text as NSString
    guard let match = regex.firstMatch(in: text, range: NSRange(location: 0, length: ns.length)), match.numberOfRanges > 1 else { return nil }
    return ns.substring(with: match.range(at: 1))
}

/// Decodes `a=b&c=d` (a query string or fragment) into ordered pairs.
func formPairs(_ encoded: String) -> [(String, String)] {
    (try? HTTPForm(decoding: Array(encoded.utf8)))?.pairs.map { ($0.name, $0.value) } ?? []
}

/// Fails unless both pair lists are equal element by element.
func assertPairs(_ actual: [(String, String)], _ expected: [(String, String)], file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(actual.map { "\($0.0)=\($0.1)" }, expected.map { "\($0.0)=\($0.1)" }, file: file, line: line)
}

/// Makes a JSON string literal body from an object (compact, in order).
func jsonText(_ object: JSONObject) -> String {
    String(decoding: JSONWriter.compact(.object(object)), as: UTF8.self)
}

/// A raw `r||s` ES256 signature re-encoded as ASN.1 DER, as `openssl_sign` produces it.
func derSignature(fromRaw raw: [UInt8]) -> [UInt8] {
    func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var value = Array(bytes.drop { $0 == 0 })
        if value.isEmpty { value = [0] }
        if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return [0x02, UInt8(value.count)] + value
    }
    let body = integer(raw[0..<32]) + integer(raw[32..<64])
    return [0x30, UInt8(body.count)] + body
}

extension AppleIDMockServer {
    /// Mock "now" in whole seconds.
    var now: Int64 { domain.now }

    /// A fresh connection.
    func client() throws -> RawHTTPClient {
        try RawHTTPClient(port: port)
    }

    /// `GET target`.
    func get(_ target: String) throws -> RawHTTPResponse {
        try client().roundTrip("GET", target)
    }

    /// POSTs form-encoded pairs (in order, duplicates kept).
    func postForm(_ path: String, _ pairs: [(String, String)], headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try client().roundTrip("POST", path, headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
                               body: Array(HTTPForm.encode(pairs).utf8))
    }

    /// POSTs a JSON body.
    func postJSON(_ path: String, _ body: String) throws -> RawHTTPResponse {
        try client().roundTrip("POST", path, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
    }

    /// A client_secret for `clientID`, signed with the default team's key, issued at mock now.
    func secret(_ clientID: String = "com.example.web", teamID: String = "MOCKTEAM01", keyID: String = "MOCKKEY001",
                key: P256PrivateKey = mockDeveloperKey, issuedAt: Int64? = nil, lifetime: Int = 3600,
                audience: String = "https://appleid.apple.com") throws -> String {
        try ClientSecret.make(teamID: teamID, keyID: keyID, clientID: clientID, privateKey: key, issuedAt: issuedAt ?? now,
                              lifetime: lifetime, audience: audience)
    }

    /// `GET /auth/authorize` with these query parameters.
    func authorizePage(_ parameters: [(String, String)]) throws -> RawHTTPResponse {
        try get("/auth/authorize?" + HTTPForm.encode(parameters))
    }

    /// A web authorization through `POST /__mock/authorize`; returns the delivered form or
    /// redirect parameters. Fails the test when the mock refuses.
    func headlessAuthorize(clientID: String = "com.example.web", redirectURI: String = webRedirect, responseType: String = "code",
                           responseMode: String = "form_post", scope: String? = "name email", state: String? = "st-1",
                           nonce: String? = "n-1", user: String = "alice", hideEmail: Bool? = nil,
                           codeChallenge: String? = nil, codeChallengeMethod: String? = nil,
                           file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let body = SignInRequests.headlessAuthorize(clientID: clientID, redirectURI: redirectURI, responseType: responseType,
                                                    responseMode: responseMode, scope: scope, state: state, nonce: nonce, user: user,
                                                    hideEmail: hideEmail, codeChallenge: codeChallenge, codeChallengeMethod: codeChallengeMethod)
        let response = try postJSON("/__mock/authorize", body)
        return try SignInRequests.delivered(status: response.status, body: response.body, responseMode: responseMode, file: file, line: line)
    }

    /// A fresh web authorization code for alice at the default Services ID.
    func webCode(redirectURI: String = webRedirect, scope: String? = "name email", nonce: String? = "n-1", user: String = "alice",
                 codeChallenge: String? = nil, codeChallengeMethod: String? = nil,
                 file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let fields = try headlessAuthorize(redirectURI: redirectURI, scope: scope, nonce: nonce, user: user, codeChallenge: codeChallenge,
                                           codeChallengeMethod: codeChallengeMethod, file: file, line: line)
        return try XCTUnwrap(fields["code"], file: file, line: line)
    }

    /// `POST /auth/token` with `grant_type=authorization_code`; nil parameters are left out.
    func redeem(_ code: String, clientID: String = "com.example.web", redirectURI: String? = webRedirect,
                verifier: String? = nil, secret: String? = nil) throws -> RawHTTPResponse {
        try postForm("/auth/token", SignInRequests.redeem(code: code, clientID: clientID, secret: try secret ?? self.secret(clientID),
                                                          redirectURI: redirectURI, verifier: verifier))
    }

    /// `POST /auth/token` with `grant_type=refresh_token`.
    func refresh(_ token: String, clientID: String = "com.example.web") throws -> RawHTTPResponse {
        try postForm("/auth/token", SignInRequests.refresh(token: token, clientID: clientID, secret: try secret(clientID)))
    }

    /// `POST /auth/token` with `grant_type=client_credentials`.
    func clientCredentials(_ clientID: String = "com.example.web", scope: String? = "user.migration", teamID: String = "MOCKTEAM01",
                           keyID: String = "MOCKKEY001", key: P256PrivateKey = mockDeveloperKey) throws -> RawHTTPResponse {
        try postForm("/auth/token", SignInRequests.clientCredentials(clientID: clientID, secret: try secret(clientID, teamID: teamID, keyID: keyID, key: key),
                                                                     scope: scope))
    }

    /// `POST /auth/revoke`.
    func revoke(_ token: String, clientID: String = "com.example.web", hint: String? = nil) throws -> RawHTTPResponse {
        try postForm("/auth/revoke", SignInRequests.revoke(token: token, clientID: clientID, secret: try secret(clientID), hint: hint))
    }

    /// Redeems a fresh web code; returns the token answer (fails the test unless 200).
    @discardableResult
    func webTokens(user: String = "alice", file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        let response = try redeem(try webCode(user: user, file: file, line: line))
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try jsonObject(response.body, file: file, line: line)
    }

    /// `POST /__mock/events`: a user's action at Apple; returns the id of the notification it
    /// queued (nil when none was made), after checking the answer is 202.
    @discardableResult
    func postEvent(_ type: String, user: String, clientID: String = "com.example.app", file: StaticString = #filePath, line: UInt = #line) throws -> UInt64? {
        let answer = try postJSON("/__mock/events", jsonText(["type": .string(type), "user": .string(user), "client_id": .string(clientID)]))
        XCTAssertEqual(answer.status, 202, answer.text, file: file, line: line)
        return try jsonObject(answer.body, file: file, line: line)["notification"]?.intValue.map(UInt64.init)
    }

    /// `POST /__mock/sign-in`.
    func nativeSignIn(user: String = "alice", clientID: String = "com.example.app", scopes: [String]? = ["name", "email"],
                      nonce: String? = "native-nonce", hideEmail: Bool? = nil) throws -> RawHTTPResponse {
        try postJSON("/__mock/sign-in", SignInRequests.nativeSignIn(user: user, clientID: clientID, scopes: scopes, nonce: nonce, hideEmail: hideEmail))
    }

    /// Verifies an id_token's RS256 signature under the key its `kid` names; returns its
    /// payload bytes as text.
    func verifiedPayload(_ token: String?, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        try SignInRequests.verifiedPayload(token, key: { domain.publicKey(keyID: $0) }, file: file, line: line)
    }

    /// Verified id_token claims.
    func verifiedClaims(_ token: String?, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        try jsonObject(Array(try verifiedPayload(token, file: file, line: line).utf8), file: file, line: line)
    }
}

/// Team scoped `sub` in the default team.
func teamSub(_ user: String, team: String = "MOCKTEAM01") -> String {
    Identity.subject(teamID: team, userID: user)
}

/// Fails unless `response` is Apple's 400 error answer with exactly `body`, JSON typed and
/// not cacheable (docs/apple-behaviour.md §2.1).
func assertAppleError(_ response: some HTTPAnswer, _ body: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, 400, file: file, line: line)
    XCTAssertEqual(response.text, body, file: file, line: line)
    assertNoStoreJSONHeaders(response, file: file, line: line)
}

/// Fails unless the head is exactly Apple's token-answer head: `Server: Apple`, JSON with
/// charset, no-store, no-cache, and on the wire the length (nothing else).
func assertNoStoreJSONHeaders(_ response: some HTTPAnswer, file: StaticString = #filePath, line: UInt = #line) {
    let framing = response is RawHTTPResponse ? ["Content-Length: \(response.body.count)"] : []
    XCTAssertEqual(response.headers.fields.map { "\($0.name): \($0.value)" },
                   ["Server: Apple", "Content-Type: application/json;charset=UTF-8", "Cache-Control: no-store", "Pragma: no-cache"] + framing,
                   file: file, line: line)
}

/// Fails unless `response` is a 200 token answer; returns the JSON.
@discardableResult
func assertTokenAnswer(_ response: some HTTPAnswer, keys: [String], file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
    XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
    assertNoStoreJSONHeaders(response, file: file, line: line)
    let answer = try jsonObject(response.body, file: file, line: line)
    XCTAssertEqual(answer.keys, keys, file: file, line: line)
    return answer
}

/// The code and message on Apple's authorize error page.
func authorizeErrorPage(_ response: some HTTPAnswer) -> (code: String?, message: String?) {
    (capture(#"<p class="error-code" id="error-code">([^<]*)</p>"#, in: response.text).map(htmlUnescape),
     capture(#"<p class="error-message" id="error-message">([^<]*)</p>"#, in: response.text).map(htmlUnescape))
}

/// Fails unless `response` is Apple's authorize error page (400, HTML, no redirect) with this
/// code and message (docs/apple-behaviour.md §2.2).
func assertAuthorizeErrorPage(_ response: some HTTPAnswer, code: String, message: String, file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, 400, file: file, line: line)
    XCTAssertNil(response.headers["Location"], file: file, line: line)
    XCTAssertEqual(response.headers["Content-Type"], "text/html; charset=utf-8", file: file, line: line)
    let page = authorizeErrorPage(response)
    XCTAssertEqual(page.code, code, file: file, line: line)
    XCTAssertEqual(page.message, message, file: file, line: line)
}

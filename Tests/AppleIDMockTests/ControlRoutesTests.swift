import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// Real time that only the test moves, so a running mock clock is deterministic (rule 10): no
/// sleeping, no timing assertions.
private final class ManualRealTime: Sendable {
    private let value: Mutex<Double>

    init(_ start: Double) { value = Mutex(start) }

    var now: Double { value.withLock { $0 } }

    func advance(by seconds: Double) { value.withLock { $0 += seconds } }
}

/// The control API's clock, keys, users, reset and credential-state routes on a live mock over
/// raw sockets, with exact status codes and bodies. Every accepted input has a refused twin.
final class ControlRoutesTests: XCTestCase {
    private static let realStart: Double = 1_750_000_000
    private static let initialKeys = ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"]
    private static let teamB = "MOCKTEAM02"
    private static let teamBApp = "com.teamb.app"
    private static let expiredCode = #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#
    private let teamBKey = try! P256PrivateKey.generate()

    // MARK: - Factories

    /// A mock whose clock starts at `frozenNow` (frozen or running) on real time the test moves.
    private func startClockedMock(frozen: Bool = true, _ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in })
        throws -> (AppleIDMockServer, ManualRealTime) {
        let realTime = ManualRealTime(Self.realStart)
        let server = try startMock { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: frozen)
            configuration.realTime = { realTime.now }
            adjust(&configuration)
        }
        return (server, realTime)
    }

    /// A frozen mock whose scenario has a second team with one App ID.
    private func startTwoTeams() throws -> AppleIDMockServer {
        let pem = try teamBKey.publicKey.pem
        return try startFrozenMock { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY002", publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: Self.teamBApp, kind: .appID)]))
        }
    }

    /// A request with any method; a body is sent as JSON.
    private func send(_ server: AppleIDMockServer, _ method: String, _ path: String, _ body: String? = nil) throws -> RawHTTPResponse {
        try server.client().roundTrip(method, path, headers: body == nil ? [] : [("Content-Type", "application/json")],
                                      body: Array((body ?? "").utf8))
    }

    /// A request written byte by byte with this `Host` (the client's own adds `localhost`).
    private func send(_ server: AppleIDMockServer, _ method: String, _ path: String, host: String, body: String? = nil) throws -> RawHTTPResponse {
        let client = try server.client()
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host)\r\n"
        if let body {
            head += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        } else if method == "POST" {
            head += "Content-Length: 0\r\n"
        }
        try client.send(head + "\r\n" + (body ?? ""))
        return try client.readResponse()
    }

    /// `POST /__mock/clock`.
    private func moveClock(_ server: AppleIDMockServer, _ body: String) throws -> RawHTTPResponse {
        try server.postJSON("/__mock/clock", body)
    }

    /// Fails unless `response` is a control answer with exactly this status and body.
    private func assertControl(_ response: RawHTTPResponse, _ status: Int, _ body: String, _ message: String = "",
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(response.status, status, message, file: file, line: line)
        XCTAssertEqual(response.text, body, message, file: file, line: line)
        XCTAssertEqual(response.headers["Content-Type"], "application/json", file: file, line: line)
    }

    /// The clock body for a mock at `epoch`.
    private func clockBody(_ epoch: Int64, frozen: Bool, offset: Int64) -> String {
        #"{"epoch":\#(epoch),"frozen":\#(frozen),"now":"\#(RFC3339.format(epoch))","offset":\#(offset)}"#
    }

    /// `GET /auth/keys` parsed by the JOSE layer.
    private func jwks(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> JWKSet {
        let response = try server.get("/auth/keys")
        XCTAssertEqual(response.status, 200, file: file, line: line)
        return try JWKSet(json: try JSONParser.parse(response.body))
    }

    /// The kids at `/auth/keys`, sorted.
    private func publishedKids(_ server: AppleIDMockServer) throws -> [String] {
        try jwks(server).keys.map(\.kid).sorted()
    }

    /// `GET /__mock/keys` parsed.
    private func keyList(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        let response = try server.get("/__mock/keys")
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try jsonObject(response.body, file: file, line: line)
    }

    /// The state `GET /__mock/keys` gives `kid`.
    private func keyState(_ server: AppleIDMockServer, _ kid: String) throws -> String? {
        try keyList(server)["keys"]?.arrayValue?.first { $0.objectValue?["kid"]?.stringValue == kid }?.objectValue?["state"]?.stringValue
    }

    /// An id_token minted through `POST /__mock/id-token`.
    private func mintIDToken(_ server: AppleIDMockServer, user: String = "alice", file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let response = try server.postJSON("/__mock/id-token", #"{"user":"\#(user)","client_id":"com.example.app"}"#)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try XCTUnwrap(try jsonObject(response.body, file: file, line: line)["id_token"]?.stringValue, file: file, line: line)
    }

    /// Whether `token` verifies under the key `/auth/keys` publishes for its kid (nil when none).
    private func verifiesAgainstPublishedKeys(_ server: AppleIDMockServer, _ token: String) throws -> Bool? {
        let jws = try CompactJWS.parse(token)
        guard let jwk = try jwks(server).key(withID: try XCTUnwrap(jws.keyID)) else { return nil }
        return jws.verifyRS256(with: try jwk.rsaPublicKey())
    }

    /// A user id nobody has used, so a first authorization never leaks between tests.
    private func freshUserID() -> String {
        "user-" + UUID().uuidString.prefix(8).lowercased()
    }

    /// `POST /__mock/users` for a fresh user; returns its id.
    private func addUser(_ server: AppleIDMockServer, hideEmail: Bool = false, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let id = freshUserID()
        let response = try server.postJSON("/__mock/users",
                                           #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson","hide_email":\#(hideEmail)}"#)
        XCTAssertEqual(response.status, 201, response.text, file: file, line: line)
        return id
    }

    /// `GET /__mock/credential-state`.
    private func credentialState(_ server: AppleIDMockServer, user: String, clientID: String = "com.example.app") throws -> RawHTTPResponse {
        try server.get("/__mock/credential-state?" + HTTPForm.encode([("user", user), ("client_id", clientID)]))
    }

    // MARK: - GET /__mock/clock

    func testClockRoute_ShowsEpochFrozenNowAndOffset_AndARunningClockFollowsRealTime() throws {
        let (frozen, frozenTime) = try startClockedMock()
        defer { frozen.stop() }
        assertControl(try frozen.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#)
        frozenTime.advance(by: 10)
        assertControl(try frozen.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000010}"#)

        let (running, runningTime) = try startClockedMock(frozen: false)
        defer { running.stop() }
        assertControl(try running.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":false,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#)
        runningTime.advance(by: 10)
        assertControl(try running.get("/__mock/clock"), 200, #"{"epoch":1700000010,"frozen":false,"now":"2023-11-14T22:13:30Z","offset":-50000000}"#)
    }

    // MARK: - POST /__mock/clock

    func testClockRoute_AdvancesSetsFreezesAndUnfreezes() throws {
        let (server, realTime) = try startClockedMock()
        defer { server.stop() }
        assertControl(try moveClock(server, #"{"advance":301}"#), 200, clockBody(1_700_000_301, frozen: true, offset: -49_999_699))
        assertControl(try moveClock(server, #"{"advance":-1}"#), 200, clockBody(1_700_000_300, frozen: true, offset: -49_999_700))
        assertControl(try moveClock(server, #"{"set":"2030-01-01T00:00:00Z"}"#), 200, clockBody(1_893_456_000, frozen: true, offset: 143_456_000))
        assertControl(try moveClock(server, #"{"set":"2030-01-01T01:00:00+01:00"}"#), 200, clockBody(1_893_456_000, frozen: true, offset: 143_456_000))
        assertControl(try moveClock(server, #"{"freeze":false}"#), 200, clockBody(1_893_456_000, frozen: false, offset: 143_456_000))
        realTime.advance(by: 5)
        assertControl(try server.get("/__mock/clock"), 200, clockBody(1_893_456_005, frozen: false, offset: 143_456_000))
        assertControl(try moveClock(server, #"{"freeze":true}"#), 200, clockBody(1_893_456_005, frozen: true, offset: 143_456_000))
        realTime.advance(by: 5)
        assertControl(try server.get("/__mock/clock"), 200, clockBody(1_893_456_005, frozen: true, offset: 143_455_995))
    }

    func testClockRoute_SetWithFreeze_StopsExactlyThere_WhileSetAloneKeepsRunning() throws {
        let (server, realTime) = try startClockedMock(frozen: false)
        defer { server.stop() }
        realTime.advance(by: 7)
        assertControl(try moveClock(server, #"{"set":"2030-01-01T00:00:00Z"}"#), 200, clockBody(1_893_456_000, frozen: false, offset: 143_455_993))
        realTime.advance(by: 100)
        XCTAssertEqual(try jsonObject(try server.get("/__mock/clock").body)["epoch"], .int(1_893_456_100))

        assertControl(try moveClock(server, #"{"set":"2030-01-01T00:00:00Z","freeze":true}"#), 200,
                      clockBody(1_893_456_000, frozen: true, offset: 143_455_893))
        realTime.advance(by: 100)
        XCTAssertEqual(try jsonObject(try server.get("/__mock/clock").body)["epoch"], .int(1_893_456_000))
    }

    func testClockRoute_RefusesBadInput_NamingTheField_AndLeavesTheClockAlone() throws {
        let (server, _) = try startClockedMock()
        defer { server.stop() }
        let refusals: [(String, String)] = [
            (#"{"advance":"x"}"#, #"{"error":"expected a number of seconds","field":"advance"}"#),
            (#"{"advance":true}"#, #"{"error":"expected a number of seconds","field":"advance"}"#),
            (#"{"advance":1e10}"#, #"{"error":"expected a number of seconds within a century","field":"advance"}"#),
            (#"{"set":"tomorrow"}"#, #"{"error":"expected an RFC 3339 time such as 2030-01-01T00:00:00Z","field":"set"}"#),
            (#"{"set":"2030-02-30T00:00:00Z"}"#, #"{"error":"expected an RFC 3339 time such as 2030-01-01T00:00:00Z","field":"set"}"#),
            (#"{"set":1893456000}"#, #"{"error":"expected a string","field":"set"}"#),
            (#"{"set":"2200-01-01T00:00:00Z"}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"advance":-1700000001}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"advance"}"#),
            // Before the epoch by a minute: the field at fault is set (probe N14), also beside a fine advance.
            (#"{"set":"1970-01-01T00:00:00+00:01"}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"set":"1970-01-01T00:00:00+00:01","advance":120}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"set":"1970-01-01T00:01:00Z","advance":-120}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"advance"}"#),
            (#"{"freeze":"yes"}"#, #"{"error":"expected true or false","field":"freeze"}"#),
            (#"{}"#, #"{"error":"expected one of advance, set, freeze","field":null}"#),
            (#"{"speed":2}"#, #"{"error":"unknown field (expected one of: advance, set, freeze)","field":"speed"}"#),
            (#"{"#, #"{"error":"body is not valid JSON","field":null}"#),
            (#"[1]"#, #"{"error":"body must be a JSON object","field":null}"#),
        ]
        let untouched = #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#
        for (body, answer) in refusals {
            assertControl(try moveClock(server, body), 400, answer)
            assertControl(try server.get("/__mock/clock"), 200, untouched)
        }
        // Twins: the last representable instant is accepted, and so is a fractional advance.
        assertControl(try moveClock(server, #"{"set":"2105-02-06T06:28:15Z"}"#), 200, clockBody(4_263_344_895, frozen: true, offset: 2_513_344_895))
        assertControl(try moveClock(server, #"{"advance":-0.5}"#), 200, clockBody(4_263_344_894, frozen: true, offset: 2_513_344_895))
    }

    func testClockRoute_RefusedMove_ChangesNothing_WhenOnlyALaterPartIsOutOfRange() throws {
        let untouched = #"{"epoch":1700000000,"frozen":false,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#
        // `freeze` is applied before `set`, and `set` before `advance`: a 400 must not leave the
        // earlier part applied.
        let cases: [(String, String)] = [
            (#"{"set":"2200-01-01T00:00:00Z","freeze":true}"#,
             #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"set":"2105-01-01T00:00:00Z","advance":8640000}"#,
             #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"advance"}"#),
        ]
        for (body, answer) in cases {
            let (server, _) = try startClockedMock(frozen: false)
            defer { server.stop() }
            assertControl(try moveClock(server, body), 400, answer)
            assertControl(try server.get("/__mock/clock"), 200, untouched, "after \(body)")
        }
        // Twin: the same parts within range are applied together.
        let (server, _) = try startClockedMock(frozen: false)
        defer { server.stop() }
        assertControl(try moveClock(server, #"{"set":"2105-01-01T00:00:00Z","advance":86400,"freeze":true}"#), 200,
                      clockBody(4_260_297_600, frozen: true, offset: 2_510_297_600))
    }

    // MARK: - Done when: every lifetime follows the clock

    func testClockRoute_CodeRedeemed301SecondsAfterIssue_IsExpired_WhileItsTwinAt299Works() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let twin = try server.webCode()
        let late = try server.webCode(user: "bob")
        XCTAssertEqual(try moveClock(server, #"{"advance":299}"#).status, 200)
        try assertTokenAnswer(try server.redeem(twin), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        XCTAssertEqual(try moveClock(server, #"{"advance":2}"#).status, 200)
        XCTAssertEqual(server.now, frozenNow + 301)
        assertAppleError(try server.redeem(late), Self.expiredCode)
    }

    func testClockRoute_IDTokenMintedAfterSet2030_CarriesThatIssuedAt() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let before = try server.verifiedClaims(try mintIDToken(server))
        XCTAssertEqual(before["iat"], .int(frozenNow))
        let moved = try jsonObject(try moveClock(server, #"{"set":"2030-01-01T00:00:00Z"}"#).body)
        XCTAssertEqual(moved["now"], "2030-01-01T00:00:00Z")
        XCTAssertEqual(moved["epoch"], .int(1_893_456_000))
        let claims = try server.verifiedClaims(try mintIDToken(server))
        XCTAssertEqual(claims["iat"], .int(1_893_456_000))
        XCTAssertEqual(claims["exp"], .int(1_893_456_000 + 86_400))
        XCTAssertEqual(claims["auth_time"], .int(1_893_456_000))
    }

    func testClockRoute_ClientSecretExpiredInMockTime_IsRefused_WhileItsTwinAt599SecondsWorks() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let secret = try server.secret("com.example.app", issuedAt: server.now, lifetime: 600)
        func clientCredentials() throws -> RawHTTPResponse {
            try server.postForm("/auth/token", [("client_id", "com.example.app"), ("client_secret", secret),
                                                ("grant_type", "client_credentials"), ("scope", "user.migration")])
        }
        XCTAssertEqual(try moveClock(server, #"{"advance":599}"#).status, 200)
        try assertTokenAnswer(try clientCredentials(), keys: ["access_token", "token_type", "expires_in"])
        XCTAssertEqual(try moveClock(server, #"{"advance":2}"#).status, 200)
        assertAppleError(try clientCredentials(), #"{"error":"invalid_client"}"#)
    }

    // MARK: - /__mock/keys

    func testKeysRoute_ListsEveryKeyWithStateAndTimes() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let initial = #"{"active_kid":"W2ek7HdPaL","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"},"#
            + #"{"activated_at":null,"kid":"Ymq4vB9xTz","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"},"#
            + #"{"activated_at":null,"kid":"r8TcNf3QsJ","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"}]}"#
        assertControl(try server.get("/__mock/keys"), 200, initial)
        XCTAssertEqual(try moveClock(server, #"{"advance":60}"#).status, 200)
        assertControl(try send(server, "DELETE", "/__mock/keys/r8TcNf3QsJ"), 200, #"{"kid":"r8TcNf3QsJ","state":"retired"}"#)
        XCTAssertEqual(try moveClock(server, #"{"advance":60}"#).status, 200)
        assertControl(try server.postJSON("/__mock/keys/Ymq4vB9xTz/activate", ""), 200, #"{"kid":"Ymq4vB9xTz","state":"active"}"#)
        let later = #"{"active_kid":"Ymq4vB9xTz","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"},"#
            + #"{"activated_at":"2023-11-14T22:15:20Z","kid":"Ymq4vB9xTz","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"},"#
            + #"{"activated_at":null,"kid":"r8TcNf3QsJ","published_at":"2023-11-14T22:13:20Z","retired_at":"2023-11-14T22:14:20Z","state":"retired"}]}"#
        assertControl(try server.get("/__mock/keys"), 200, later)
    }

    func testKeysRoute_PublishesAGeneratedOrNamedKey_WithoutSigningWithIt() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertControl(try server.postJSON("/__mock/keys", #"{"kid":"Custom1"}"#), 201, #"{"kid":"Custom1","state":"published"}"#)
        let generated = try server.postJSON("/__mock/keys", "")
        XCTAssertEqual(generated.status, 201, generated.text)
        let kid = try XCTUnwrap(try jsonObject(generated.body)["kid"]?.stringValue)
        XCTAssertTrue(matches(kid, "^[A-Za-z0-9]{10}$"), kid)
        XCTAssertEqual(generated.text, #"{"kid":"\#(kid)","state":"published"}"#)
        XCTAssertEqual(try publishedKids(server), (Self.initialKeys + ["Custom1", kid]).sorted())
        XCTAssertEqual(try keyState(server, "Custom1"), "published")
        XCTAssertEqual(try CompactJWS.parse(try mintIDToken(server)).keyID, "W2ek7HdPaL")
    }

    func testKeysRoute_PublishesASuppliedPEM_UnderANewKid() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let pem = try String(contentsOfFile: repositoryRoot + "/Keys/signing/Ymq4vB9xTz.pem", encoding: .utf8)
        assertControl(try server.postJSON("/__mock/keys", jsonText(["kid": "Copy1", "pem": .string(pem)])), 201, #"{"kid":"Copy1","state":"published"}"#)
        let set = try jwks(server)
        XCTAssertEqual(try XCTUnwrap(set.key(withID: "Copy1")).n, try XCTUnwrap(set.key(withID: "Ymq4vB9xTz")).n)
        // Signing with it: tokens verify under the supplied key's JWK.
        XCTAssertEqual(try server.postJSON("/__mock/keys/Copy1/activate", "").status, 200)
        let token = try mintIDToken(server)
        XCTAssertEqual(try CompactJWS.parse(token).keyID, "Copy1")
        XCTAssertEqual(try verifiesAgainstPublishedKeys(server, token), true)
    }

    func testKeysRoute_RefusesDuplicateBadKidAndBadPEM() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertControl(try server.postJSON("/__mock/keys", #"{"kid":"Ymq4vB9xTz"}"#), 409,
                      #"{"error":"a key with this kid exists already","field":"kid","kid":"Ymq4vB9xTz"}"#)
        assertControl(try server.postJSON("/__mock/keys", #"{"kid":"bad-kid!"}"#), 400,
                      #"{"error":"expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)","field":"kid"}"#)
        assertControl(try server.postJSON("/__mock/keys", #"{"kid":"ElevenChars"}"#), 400,
                      #"{"error":"expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)","field":"kid"}"#)
        assertControl(try server.postJSON("/__mock/keys", #"{"kid":7}"#), 400, #"{"error":"expected a string","field":"kid"}"#)
        assertControl(try server.postJSON("/__mock/keys", #"{"kid":"Custom1","use":"sig"}"#), 400,
                      #"{"error":"unknown field (expected one of: kid, pem)","field":"use"}"#)
        let junk = try server.postJSON("/__mock/keys", #"{"kid":"Custom2","pem":"not a pem"}"#)
        XCTAssertEqual(junk.status, 400)
        let junkBody = try jsonObject(junk.body)
        XCTAssertEqual(junkBody.keys, ["error", "field"])
        XCTAssertEqual(junkBody["field"], "pem")
        XCTAssertTrue(junkBody["error"]?.stringValue?.hasPrefix("expected a PEM RSA private key (PKCS#8): ") == true, junk.text)
        let ecKey = try String(contentsOfFile: repositoryRoot + "/Keys/AuthKey_MOCKKEY001.p8", encoding: .utf8)
        let ec = try server.postJSON("/__mock/keys", jsonText(["kid": "Custom3", "pem": .string(ecKey)]))
        XCTAssertEqual(ec.status, 400)
        XCTAssertEqual(try jsonObject(ec.body)["field"], "pem")
        XCTAssertEqual(try publishedKids(server), Self.initialKeys.sorted())
        XCTAssertEqual(try keyList(server)["keys"]?.arrayValue?.count, 3)
    }

    func testKeysRoute_RotatePublishesAndActivatesAFreshKey_KeepingThePreviousPublished() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        // Refused twin first: rotate takes no fields.
        let refused = try server.postJSON("/__mock/keys/rotate", #"{"kid":"Custom1"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try jsonObject(refused.body)["field"], "kid")
        XCTAssertEqual(try publishedKids(server), Self.initialKeys.sorted())
        let rotated = try server.postJSON("/__mock/keys/rotate", "")
        XCTAssertEqual(rotated.status, 200, rotated.text)
        let kid = try XCTUnwrap(try jsonObject(rotated.body)["kid"]?.stringValue)
        XCTAssertTrue(matches(kid, "^[A-Za-z0-9]{10}$"), kid)
        assertControl(rotated, 200, #"{"kid":"\#(kid)","previous":"W2ek7HdPaL","retired":[],"state":"active"}"#)
        XCTAssertEqual(try jsonObject(try server.get("/__mock/health").body)["active_kid"], .string(kid))
        XCTAssertEqual(try publishedKids(server), (Self.initialKeys + [kid]).sorted())
        XCTAssertEqual(try keyState(server, "W2ek7HdPaL"), "published")
        let token = try mintIDToken(server)
        XCTAssertEqual(try CompactJWS.parse(token).keyID, kid)
        XCTAssertEqual(try verifiesAgainstPublishedKeys(server, token), true)
    }

    func testKeysRoute_ActivateRefusesUnknownAndRetiredKids_AndOtherMethods() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertControl(try server.postJSON("/__mock/keys/Nope1/activate", ""), 404, #"{"error":"no key with this kid","field":"kid","kid":"Nope1"}"#)
        XCTAssertEqual(try send(server, "DELETE", "/__mock/keys/r8TcNf3QsJ").status, 200)
        assertControl(try server.postJSON("/__mock/keys/r8TcNf3QsJ/activate", ""), 409, #"{"error":"the key is retired","field":"kid","kid":"r8TcNf3QsJ"}"#)
        let get = try server.get("/__mock/keys/Ymq4vB9xTz/activate")
        assertControl(get, 405, #"{"error":"method not allowed (allowed: POST)","field":null}"#)
        XCTAssertEqual(get.headers["Allow"], "POST")
        XCTAssertEqual(try server.get("/__mock/keys/Ymq4vB9xTz/deactivate").status, 404)
        XCTAssertEqual(try jsonObject(try server.get("/__mock/health").body)["active_kid"], "W2ek7HdPaL")
        // Twin: a published kid activates.
        assertControl(try server.postJSON("/__mock/keys/Ymq4vB9xTz/activate", ""), 200, #"{"kid":"Ymq4vB9xTz","state":"active"}"#)
        XCTAssertEqual(try jsonObject(try server.get("/__mock/health").body)["active_kid"], "Ymq4vB9xTz")
    }

    func testKeysRoute_DeleteRefusesTheSigningKeyAndUnknownKids_AndAnswers405ToGet() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertControl(try send(server, "DELETE", "/__mock/keys/W2ek7HdPaL"), 409,
                      #"{"error":"the key signs new tokens: activate another key before retiring it","field":"kid","kid":"W2ek7HdPaL"}"#)
        assertControl(try send(server, "DELETE", "/__mock/keys/Nope1"), 404, #"{"error":"no key with this kid","field":"kid","kid":"Nope1"}"#)
        let get = try server.get("/__mock/keys/Ymq4vB9xTz")
        assertControl(get, 405, #"{"error":"method not allowed (allowed: DELETE)","field":null}"#)
        XCTAssertEqual(get.headers["Allow"], "DELETE")
        XCTAssertEqual(try publishedKids(server), Self.initialKeys.sorted())
        // Twins: a published key that does not sign is retired; retiring it again is a conflict.
        assertControl(try send(server, "DELETE", "/__mock/keys/Ymq4vB9xTz"), 200, #"{"kid":"Ymq4vB9xTz","state":"retired"}"#)
        assertControl(try send(server, "DELETE", "/__mock/keys/Ymq4vB9xTz"), 409, #"{"error":"the key is retired","field":"kid","kid":"Ymq4vB9xTz"}"#)
        XCTAssertEqual(try publishedKids(server), ["W2ek7HdPaL", "r8TcNf3QsJ"])
    }

    func testKeysRoute_AfterDelete_TheKidIsGoneAndTokensItSignedFindNoKey() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let old = try mintIDToken(server)
        XCTAssertEqual(try CompactJWS.parse(old).keyID, "W2ek7HdPaL")
        XCTAssertEqual(try server.postJSON("/__mock/keys/rotate", "").status, 200)
        let new = try mintIDToken(server)
        // While published, the old key still verifies what it signed.
        XCTAssertEqual(try verifiesAgainstPublishedKeys(server, old), true)
        assertControl(try send(server, "DELETE", "/__mock/keys/W2ek7HdPaL"), 200, #"{"kid":"W2ek7HdPaL","state":"retired"}"#)
        XCTAssertFalse(try publishedKids(server).contains("W2ek7HdPaL"))
        XCTAssertNil(try verifiesAgainstPublishedKeys(server, old))
        XCTAssertEqual(try verifiesAgainstPublishedKeys(server, new), true)
        XCTAssertEqual(try keyState(server, "W2ek7HdPaL"), "retired")
    }

    // MARK: - /__mock/users

    func testUsersRoute_AddsAUser_AnsweringItsSubAndRelayAddressPerTeam() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        let id = freshUserID()
        let response = try server.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson","hide_email":true,"real_user_status":1}"#)
        func team(_ teamID: String) -> String {
            #"{"relay_email":"\#(Identity.relayAddress(teamID: teamID, userID: id))","relay_forwarding":true,"sub":"\#(teamSub(id, team: teamID))","team_id":"\#(teamID)"}"#
        }
        assertControl(response, 201, #"{"deleted":false,"email":"\#(id)@example.com","family_name":"Carlson","given_name":"Carol","hide_email":true,"id":"\#(id)","real_user_status":1,"relay_domain":"privaterelay.appleid.com","teams":[\#(team("MOCKTEAM01")),\#(team(Self.teamB))]}"#)
        let teams = try XCTUnwrap(try jsonObject(response.body)["teams"]?.arrayValue)
        for entry in teams {
            XCTAssertTrue(matches(entry.objectValue?["relay_email"]?.stringValue, relayPattern))
            XCTAssertTrue(matches(entry.objectValue?["sub"]?.stringValue, #"^[0-9]{6}\.[0-9a-f]{32}\.[0-9]{4}$"#))
        }
        XCTAssertNotEqual(teams[0].objectValue?["sub"], teams[1].objectValue?["sub"])
        // Listed after the scenario's users; defaults fill what was left out.
        let other = freshUserID()
        XCTAssertEqual(try server.postJSON("/__mock/users", #"{"id":"\#(other)","email":"\#(other)@example.com"}"#).status, 201)
        let listed = try server.get("/__mock/users")
        XCTAssertEqual(listed.status, 200)
        let users = try XCTUnwrap(try jsonObject(listed.body)["users"]?.arrayValue).compactMap(\.objectValue)
        XCTAssertEqual(users.map { $0["id"]?.stringValue }, ["alice", "bob", "carol", id, other])
        XCTAssertEqual(users[4]["given_name"], "")
        XCTAssertEqual(users[4]["hide_email"], false)
        XCTAssertEqual(users[4]["real_user_status"], .int(2))
        XCTAssertEqual(users[4]["relay_domain"], "privaterelay.appleid.com")
        // A user on the new domain: the same local part, the new domain, in every team.
        let moved = freshUserID()
        let new = try jsonObject(try server.postJSON("/__mock/users", #"{"id":"\#(moved)","email":"\#(moved)@example.com","relay_domain":"private.icloud.com"}"#).body)
        XCTAssertEqual(new["relay_domain"], "private.icloud.com")
        XCTAssertEqual(new["teams"]?.arrayValue?.compactMap { $0.objectValue?["relay_email"]?.stringValue },
                       ["MOCKTEAM01", Self.teamB].map { Identity.relayAddress(teamID: $0, userID: moved, domain: .privateICloud) })
        XCTAssertTrue(Identity.relayAddress(teamID: "MOCKTEAM01", userID: moved, domain: .privateICloud).hasSuffix("@private.icloud.com"))
    }

    func testUsersRoute_RefusesDuplicateMissingAndBadFields() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let id = try addUser(server)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"\#(id)","email":"other@example.com"}"#), 409,
                      #"{"error":"a user with id \"\#(id)\" exists already","field":"id"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"alice","email":"alice2@example.com"}"#), 409,
                      #"{"error":"a user with id \"alice\" exists already","field":"id"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"erin"}"#), 400, #"{"error":"missing required field","field":"email"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"email":"erin@example.com"}"#), 400, #"{"error":"missing required field","field":"id"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"bad id!","email":"erin@example.com"}"#), 400,
                      #"{"error":"expected 1 to 64 letters, digits, '.', '-' or '_'","field":"id"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin.example.com"}"#), 400,
                      #"{"error":"expected an email address","field":"email"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","real_user_status":3}"#), 400,
                      #"{"error":"expected 0, 1 or 2","field":"real_user_status"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","hide_email":"yes"}"#), 400,
                      #"{"error":"expected true or false","field":"hide_email"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","phone":"1"}"#), 400,
                      #"{"error":"unknown field (expected one of: id, email, given_name, family_name, hide_email, real_user_status, relay_domain)","field":"phone"}"#)
        assertControl(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","relay_domain":"icloud.com"}"#), 400,
                      #"{"error":"expected \"private.icloud.com\" or \"privaterelay.appleid.com\"","field":"relay_domain"}"#)
        let users = try XCTUnwrap(try jsonObject(try server.get("/__mock/users").body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol", id])
        // Twin: the same user with every field right is accepted.
        XCTAssertEqual(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","real_user_status":0}"#).status, 201)
    }

    func testUsersRoute_RefusesIdsShapedLikeASub_AndEmailsWithControlCharacters() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        // alice's sub as an id would shadow her in every lookup by user (probe N13).
        let aliceSub = teamSub("alice")
        assertControl(try server.postJSON("/__mock/users", #"{"id":"\#(aliceSub)","email":"impostor@example.com"}"#), 400,
                      #"{"error":"expected an id that is not shaped like a sub (NNNNNN.<32 hex>.NNNN)","field":"id"}"#)
        for email in [#"a\u0000b@example.com"#, #"a\tb@c"#, #"a\r\nb@example.com"#, #"a@example.com\r\n"#, #"a\u007fb@example.com"#] {
            assertControl(try server.postJSON("/__mock/users", #"{"id":"erin","email":"\#(email)"}"#), 400,
                          #"{"error":"expected an email address","field":"email"}"#)
        }
        // The twins: an id with the same parts but another shape, and a plain email.
        XCTAssertEqual(try server.postJSON("/__mock/users", #"{"id":"\#(aliceSub).x","email":"erin@example.com"}"#).status, 201)
        XCTAssertEqual(try server.postJSON("/__mock/users", #"{"id":"erin","email":"erin+tag@example.com"}"#).status, 201)
    }

    func testUsersRoute_RuntimeUserGetsUserJSONOnFirstAuthorizationOnly() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let id = freshUserID()
        // Before it is added, signing in as it is refused, naming the user.
        let unknown = try server.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"\#(id)"}"#)
        assertControl(unknown, 400, #"{"apple_error":"invalid_request","error":"no user \"\#(id)\" in the scenario","field":"user"}"#)
        XCTAssertEqual(try server.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson"}"#).status, 201)
        let first = try server.headlessAuthorize(user: id)
        XCTAssertEqual(first["user"], #"{"name":{"firstName":"Carol","lastName":"Carlson"},"email":"\#(id)@example.com"}"#)
        let tokens = try assertTokenAnswer(try server.redeem(try XCTUnwrap(first["code"])), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let claims = try server.verifiedClaims(tokens["id_token"]?.stringValue)
        XCTAssertEqual(claims["sub"], .string(teamSub(id)))
        XCTAssertEqual(claims["email"], .string("\(id)@example.com"))
        let second = try server.headlessAuthorize(user: id)
        XCTAssertNil(second["user"])
        XCTAssertNotNil(second["code"])
    }

    func testUsersRoute_RuntimeUserHidingEmail_GetsTheRelayAddressTheRouteAnswered() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let id = freshUserID()
        let added = try server.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","hide_email":true}"#)
        let relay = try XCTUnwrap(try jsonObject(added.body)["teams"]?.arrayValue?.first?.objectValue?["relay_email"]?.stringValue)
        let native = try jsonObject(try server.nativeSignIn(user: id).body)
        XCTAssertEqual(native["email"], .string(relay))
        XCTAssertEqual(native["user"], .string(teamSub(id)))
        // Twin: a runtime user who shares the address gets the real one.
        let sharing = try addUser(server)
        XCTAssertEqual(try jsonObject(try server.nativeSignIn(user: sharing).body)["email"], .string("\(sharing)@example.com"))
    }

    // MARK: - POST /__mock/reset

    func testResetRoute_ReturnsEverythingToTheScenariosInitialState() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let id = try addUser(server)
        XCTAssertNotNil(try server.headlessAuthorize(user: id)["user"])
        let pending = try server.webCode()
        let refreshToken = try XCTUnwrap(try server.webTokens(user: "bob")["refresh_token"]?.stringValue)
        XCTAssertEqual(try server.postJSON("/__mock/keys/rotate", "").status, 200)
        XCTAssertEqual(try moveClock(server, #"{"advance":120}"#).status, 200)
        // Refused twin: reset takes no fields, and resets nothing when refused.
        let refused = try server.postJSON("/__mock/reset", #"{"keep":"users"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try jsonObject(refused.body)["field"], "keep")
        XCTAssertEqual(server.now, frozenNow + 120)

        assertControl(try server.postJSON("/__mock/reset", ""), 200, #"{"active_kid":"W2ek7HdPaL","now":"2023-11-14T22:13:20Z"}"#)
        // Users added at runtime are gone.
        let users = try XCTUnwrap(try jsonObject(try server.get("/__mock/users").body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol"])
        let signIn = try server.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"\#(id)"}"#)
        assertControl(signIn, 400, #"{"apple_error":"invalid_request","error":"no user \"\#(id)\" in the scenario","field":"user"}"#)
        // Codes and tokens from before are refused.
        assertAppleError(try server.redeem(pending), Self.expiredCode)
        assertAppleError(try server.refresh(refreshToken), #"{"error":"invalid_grant"}"#)
        // The clock and the keys are back.
        XCTAssertEqual(try jsonObject(try server.get("/__mock/clock").body)["epoch"], .int(frozenNow))
        XCTAssertEqual(try publishedKids(server), Self.initialKeys.sorted())
        XCTAssertEqual(try keyList(server)["keys"]?.arrayValue?.count, 3)
        // Consents are gone: alice authorizes for the first time again, and what is issued now works.
        let again = try server.headlessAuthorize()
        XCTAssertNotNil(again["user"])
        XCTAssertEqual(try server.redeem(try XCTUnwrap(again["code"])).status, 200)
    }

    // MARK: - GET /__mock/credential-state, one test per state

    func testCredentialStateRoute_IsNotFound_BeforeSignIn_AndForAnUnknownUser() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertControl(try credentialState(server, user: "alice"), 200, #"{"state":"notFound"}"#)
        assertControl(try credentialState(server, user: "zed"), 200, #"{"state":"notFound"}"#)
        assertControl(try credentialState(server, user: teamSub("zed")), 200, #"{"state":"notFound"}"#)
        // Twin: after a sign-in, the same question is answered authorized.
        XCTAssertEqual(try server.nativeSignIn().status, 200)
        assertControl(try credentialState(server, user: "alice"), 200, #"{"state":"authorized"}"#)
    }

    func testCredentialStateRoute_IsAuthorized_AfterSignIn_ByIDOrSub() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let id = try addUser(server)
        XCTAssertEqual(try server.nativeSignIn(user: id).status, 200)
        assertControl(try credentialState(server, user: id), 200, #"{"state":"authorized"}"#)
        assertControl(try credentialState(server, user: teamSub(id)), 200, #"{"state":"authorized"}"#)
        assertControl(try credentialState(server, user: id, clientID: "com.example.web"), 200, #"{"state":"authorized"}"#)
        assertControl(try credentialState(server, user: "bob"), 200, #"{"state":"notFound"}"#)
    }

    func testCredentialStateRoute_IsRevoked_AfterTheAppRevokes() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let tokens = try server.webTokens()
        assertControl(try credentialState(server, user: "alice"), 200, #"{"state":"authorized"}"#)
        XCTAssertEqual(try server.revoke(try XCTUnwrap(tokens["refresh_token"]?.stringValue)).status, 200)
        assertControl(try credentialState(server, user: "alice"), 200, #"{"state":"revoked"}"#)
        assertControl(try credentialState(server, user: teamSub("alice"), clientID: "com.example.web"), 200, #"{"state":"revoked"}"#)
    }

    func testCredentialStateRoute_IsTransferred_AfterATeamTransfer() throws {
        let server = try startTwoTeams()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob").status, 200)
        XCTAssertEqual(try server.nativeSignIn(user: "alice").status, 200)
        let bearer = try XCTUnwrap(try jsonObject(try server.clientCredentials("com.example.app").body)["access_token"]?.stringValue)
        let transfer = try server.postForm("/auth/usermigrationinfo",
                                           [("sub", teamSub("bob")), ("target", Self.teamB), ("client_id", "com.example.app"),
                                            ("client_secret", try server.secret("com.example.app"))],
                                           headers: [("Authorization", "Bearer \(bearer)")])
        XCTAssertEqual(transfer.status, 200, transfer.text)
        assertControl(try credentialState(server, user: "bob"), 200, #"{"state":"transferred"}"#)
        assertControl(try credentialState(server, user: teamSub("bob")), 200, #"{"state":"transferred"}"#)
        // Twin: alice was not transferred.
        assertControl(try credentialState(server, user: "alice"), 200, #"{"state":"authorized"}"#)
    }

    func testCredentialStateRoute_RefusesMissingUnknownAndRepeatedParameters() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        assertControl(try server.get("/__mock/credential-state?client_id=com.example.app"), 400,
                      #"{"error":"missing required parameter (a user id or sub)","field":"user"}"#)
        assertControl(try server.get("/__mock/credential-state?user=&client_id=com.example.app"), 400,
                      #"{"error":"missing required parameter (a user id or sub)","field":"user"}"#)
        assertControl(try server.get("/__mock/credential-state?user=alice"), 400, #"{"error":"missing required parameter","field":"client_id"}"#)
        assertControl(try credentialState(server, user: "alice", clientID: "com.nope"), 404, #"{"error":"no client \"com.nope\" in the scenario","field":"client_id"}"#)
        assertControl(try server.get("/__mock/credential-state?user=alice&client_id=com.example.app&team=x"), 400,
                      #"{"error":"unknown parameter (expected user, client_id)","field":"team"}"#)
        assertControl(try server.get("/__mock/credential-state?user=alice&user=bob&client_id=com.example.app"), 400,
                      #"{"error":"given more than once","field":"user"}"#)
        XCTAssertEqual(try server.postJSON("/__mock/credential-state", "").status, 405)
        assertControl(try server.get("/__mock/credential-state?user=alice&client_id=com.example.app"), 200, #"{"state":"notFound"}"#)
    }

    // MARK: - The control guard covers the new routes

    func testControlGuard_RefusesAForeignHost_OnEveryNewRoute_AndChangesNothing() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let routes: [(String, String, String?)] = [
            ("GET", "/__mock/clock", nil), ("POST", "/__mock/clock", #"{"advance":60}"#),
            ("GET", "/__mock/keys", nil), ("POST", "/__mock/keys", #"{"kid":"Custom1"}"#), ("POST", "/__mock/keys/rotate", nil),
            ("POST", "/__mock/keys/Ymq4vB9xTz/activate", nil), ("DELETE", "/__mock/keys/r8TcNf3QsJ", nil),
            ("GET", "/__mock/users", nil), ("POST", "/__mock/users", #"{"id":"mallory","email":"m@example.com"}"#),
            ("POST", "/__mock/reset", nil), ("GET", "/__mock/credential-state?user=alice&client_id=com.example.app", nil),
        ]
        XCTAssertEqual(try moveClock(server, #"{"advance":1}"#).status, 200)
        for (method, path, body) in routes {
            assertControl(try send(server, method, path, host: "attacker.example", body: body), 403,
                          #"{"error":"Host \"attacker.example\" is not allowed for the control API (allow a name with --allowed-host)","field":"Host"}"#)
        }
        XCTAssertEqual(server.now, frozenNow + 1, "neither moved nor reset")
        XCTAssertEqual(try keyList(server)["keys"]?.arrayValue?.count, 3)
        XCTAssertEqual(try keyState(server, "r8TcNf3QsJ"), "published")
        XCTAssertEqual(try jsonObject(try server.get("/__mock/health").body)["active_kid"], "W2ek7HdPaL")
        XCTAssertNil(server.domain.state.user("mallory"))
        // A cross-site Origin and a text/plain body are refused too.
        let client = try server.client()
        let crossSite = try client.roundTrip("POST", "/__mock/reset", headers: [("Origin", "https://attacker.example")])
        assertControl(crossSite, 403, #"{"error":"cross-origin requests to the control API are refused","field":"Origin"}"#)
        let plain = try server.client().roundTrip("POST", "/__mock/clock", headers: [("Content-Type", "text/plain")], body: Array(#"{"advance":60}"#.utf8))
        assertControl(plain, 415, #"{"error":"expected Content-Type: application/json","field":"Content-Type"}"#)
        XCTAssertEqual(server.now, frozenNow + 1)
        // Twins: the same requests under an IP literal are served.
        let port = server.port
        XCTAssertEqual(try send(server, "GET", "/__mock/clock", host: "127.0.0.1:\(port)").status, 200)
        XCTAssertEqual(try send(server, "POST", "/__mock/clock", host: "127.0.0.1:\(port)", body: #"{"advance":60}"#).status, 200)
        XCTAssertEqual(try send(server, "DELETE", "/__mock/keys/r8TcNf3QsJ", host: "127.0.0.1:\(port)").status, 200)
        XCTAssertEqual(try send(server, "POST", "/__mock/users", host: "127.0.0.1:\(port)", body: #"{"id":"mallory","email":"m@example.com"}"#).status, 201)
        XCTAssertEqual(try send(server, "POST", "/__mock/reset", host: "127.0.0.1:\(port)").status, 200)
        XCTAssertEqual(server.now, frozenNow)
    }
}

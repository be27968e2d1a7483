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
        throws -> (any MockClient, ManualRealTime) {
        let realTime = ManualRealTime(Self.realStart)
        let mock = try startClient { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: frozen)
            configuration.realTime = { realTime.now }
            adjust(&configuration)
        }
        return (mock, realTime)
    }

    /// A frozen mock whose scenario has a second team with one App ID.
    private func startTwoTeams() throws -> any MockClient {
        let pem = try teamBKey.publicKey.pem
        return try frozenClient { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY002", publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: Self.teamBApp, kind: .appID)]))
        }
    }

    /// A request with any method; a body is sent as JSON.
    private func send(_ mock: any MockClient, _ method: String, _ path: String, _ body: String? = nil) async throws -> MockAnswer {
        try await mock.send(method, path, headers: body == nil ? [] : [("Content-Type", "application/json")],
                                      body: Array((body ?? "").utf8))
    }

    /// A request with this `Host` (rather than `localhost`); a body is sent as JSON.
    private func send(_ mock: any MockClient, _ method: String, _ path: String, host: String, body: String? = nil) async throws -> MockAnswer {
        try await mock.send(method, path, headers: [("Host", host)] + (body == nil ? [] : [("Content-Type", "application/json")]),
                            body: Array((body ?? "").utf8))
    }

    /// `POST /__mock/clock`.
    private func moveClock(_ mock: any MockClient, _ body: String) async throws -> MockAnswer {
        try await mock.postJSON("/__mock/clock", body)
    }

    /// Fails unless `response` is a control answer with exactly this status and body.
    private func assertControl(_ response: MockAnswer, _ status: Int, _ body: String, _ message: String = "",
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
    private func jwks(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> JWKSet {
        let response = try await mock.get("/auth/keys")
        XCTAssertEqual(response.status, 200, file: file, line: line)
        return try JWKSet(json: try JSONParser.parse(response.body))
    }

    /// The kids at `/auth/keys`, sorted.
    private func publishedKids(_ mock: any MockClient) async throws -> [String] {
        try await jwks(mock).keys.map(\.kid).sorted()
    }

    /// `GET /__mock/keys` parsed.
    private func keyList(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> JSONObject {
        let response = try await mock.get("/__mock/keys")
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try jsonObject(response.body, file: file, line: line)
    }

    /// The state `GET /__mock/keys` gives `kid`.
    private func keyState(_ mock: any MockClient, _ kid: String) async throws -> String? {
        try await keyList(mock)["keys"]?.arrayValue?.first { $0.objectValue?["kid"]?.stringValue == kid }?.objectValue?["state"]?.stringValue
    }

    /// An id_token minted through `POST /__mock/id-token`.
    private func mintIDToken(_ mock: any MockClient, user: String = "alice", file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let response = try await mock.postJSON("/__mock/id-token", #"{"user":"\#(user)","client_id":"com.example.app"}"#)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try XCTUnwrap(try jsonObject(response.body, file: file, line: line)["id_token"]?.stringValue, file: file, line: line)
    }

    /// Whether `token` verifies under the key `/auth/keys` publishes for its kid (nil when none).
    private func verifiesAgainstPublishedKeys(_ mock: any MockClient, _ token: String) async throws -> Bool? {
        let jws = try CompactJWS.parse(token)
        guard let jwk = try await jwks(mock).key(withID: try XCTUnwrap(jws.keyID)) else { return nil }
        return jws.verifyRS256(with: try jwk.rsaPublicKey())
    }

    /// A user id nobody has used, so a first authorization never leaks between tests.
    private func freshUserID() -> String {
        "user-" + UUID().uuidString.prefix(8).lowercased()
    }

    /// `POST /__mock/users` for a fresh user; returns its id.
    private func addUser(_ mock: any MockClient, hideEmail: Bool = false, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
        let id = freshUserID()
        let response = try await mock.postJSON("/__mock/users",
                                           #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson","hide_email":\#(hideEmail)}"#)
        XCTAssertEqual(response.status, 201, response.text, file: file, line: line)
        return id
    }

    /// `GET /__mock/credential-state`.
    private func credentialState(_ mock: any MockClient, user: String, clientID: String = "com.example.app") async throws -> MockAnswer {
        try await mock.get("/__mock/credential-state?" + HTTPForm.encode([("user", user), ("client_id", clientID)]))
    }

    // MARK: - GET /__mock/clock

    func testClockRoute_ShowsEpochFrozenNowAndOffset_AndARunningClockFollowsRealTime() async throws {
        let (frozen, frozenTime) = try startClockedMock()
        assertControl(try await frozen.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#)
        frozenTime.advance(by: 10)
        assertControl(try await frozen.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000010}"#)

        let (running, runningTime) = try startClockedMock(frozen: false)
        assertControl(try await running.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":false,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#)
        runningTime.advance(by: 10)
        assertControl(try await running.get("/__mock/clock"), 200, #"{"epoch":1700000010,"frozen":false,"now":"2023-11-14T22:13:30Z","offset":-50000000}"#)
    }

    // MARK: - POST /__mock/clock

    func testClockRoute_AdvancesSetsFreezesAndUnfreezes() async throws {
        let (mock, realTime) = try startClockedMock()
        assertControl(try await moveClock(mock, #"{"advance":301}"#), 200, clockBody(1_700_000_301, frozen: true, offset: -49_999_699))
        assertControl(try await moveClock(mock, #"{"advance":-1}"#), 200, clockBody(1_700_000_300, frozen: true, offset: -49_999_700))
        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z"}"#), 200, clockBody(1_893_456_000, frozen: true, offset: 143_456_000))
        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T01:00:00+01:00"}"#), 200, clockBody(1_893_456_000, frozen: true, offset: 143_456_000))
        assertControl(try await moveClock(mock, #"{"freeze":false}"#), 200, clockBody(1_893_456_000, frozen: false, offset: 143_456_000))
        realTime.advance(by: 5)
        assertControl(try await mock.get("/__mock/clock"), 200, clockBody(1_893_456_005, frozen: false, offset: 143_456_000))
        assertControl(try await moveClock(mock, #"{"freeze":true}"#), 200, clockBody(1_893_456_005, frozen: true, offset: 143_456_000))
        realTime.advance(by: 5)
        assertControl(try await mock.get("/__mock/clock"), 200, clockBody(1_893_456_005, frozen: true, offset: 143_455_995))
    }

    func testClockRoute_SetWithFreeze_StopsExactlyThere_WhileSetAloneKeepsRunning() async throws {
        let (mock, realTime) = try startClockedMock(frozen: false)
        realTime.advance(by: 7)
        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z"}"#), 200, clockBody(1_893_456_000, frozen: false, offset: 143_455_993))
        realTime.advance(by: 100)
        let fetched = try jsonObject(try await mock.get("/__mock/clock").body)["epoch"]
        XCTAssertEqual(fetched, .int(1_893_456_100))

        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z","freeze":true}"#), 200,
                      clockBody(1_893_456_000, frozen: true, offset: 143_455_893))
        realTime.advance(by: 100)
        let fetched2 = try jsonObject(try await mock.get("/__mock/clock").body)["epoch"]
        XCTAssertEqual(fetched2, .int(1_893_456_000))
    }

    func testClockRoute_RefusesBadInput_NamingTheField_AndLeavesTheClockAlone() async throws {
        let (mock, _) = try startClockedMock()
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
            assertControl(try await moveClock(mock, body), 400, answer)
            assertControl(try await mock.get("/__mock/clock"), 200, untouched)
        }
        // Twins: the last representable instant is accepted, and so is a fractional advance.
        assertControl(try await moveClock(mock, #"{"set":"2105-02-06T06:28:15Z"}"#), 200, clockBody(4_263_344_895, frozen: true, offset: 2_513_344_895))
        assertControl(try await moveClock(mock, #"{"advance":-0.5}"#), 200, clockBody(4_263_344_894, frozen: true, offset: 2_513_344_895))
    }

    func testClockRoute_RefusedMove_ChangesNothing_WhenOnlyALaterPartIsOutOfRange() async throws {
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
            let (mock, _) = try startClockedMock(frozen: false)
            assertControl(try await moveClock(mock, body), 400, answer)
            assertControl(try await mock.get("/__mock/clock"), 200, untouched, "after \(body)")
        }
        // Twin: the same parts within range are applied together.
        let (mock, _) = try startClockedMock(frozen: false)
        assertControl(try await moveClock(mock, #"{"set":"2105-01-01T00:00:00Z","advance":86400,"freeze":true}"#), 200,
                      clockBody(4_260_297_600, frozen: true, offset: 2_510_297_600))
    }

    // MARK: - Done when: every lifetime follows the clock

    func testClockRoute_CodeRedeemed301SecondsAfterIssue_IsExpired_WhileItsTwinAt299Works() async throws {
        let mock = try frozenClient()
        let twin = try await mock.webCode()
        let late = try await mock.webCode(user: "bob")
        assertStatus(try await moveClock(mock, #"{"advance":299}"#), 200)
        try assertTokenAnswer(try await mock.redeem(twin), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        assertStatus(try await moveClock(mock, #"{"advance":2}"#), 200)
        let now = try await mock.now()
        XCTAssertEqual(now, frozenNow + 301)
        assertAppleError(try await mock.redeem(late), Self.expiredCode)
    }

    func testClockRoute_IDTokenMintedAfterSet2030_CarriesThatIssuedAt() async throws {
        let mock = try frozenClient()
        let before = try await mock.verifiedClaims(try await mintIDToken(mock))
        XCTAssertEqual(before["iat"], .int(frozenNow))
        let moved = try jsonObject(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z"}"#).body)
        XCTAssertEqual(moved["now"], "2030-01-01T00:00:00Z")
        XCTAssertEqual(moved["epoch"], .int(1_893_456_000))
        let claims = try await mock.verifiedClaims(try await mintIDToken(mock))
        XCTAssertEqual(claims["iat"], .int(1_893_456_000))
        XCTAssertEqual(claims["exp"], .int(1_893_456_000 + 86_400))
        XCTAssertEqual(claims["auth_time"], .int(1_893_456_000))
    }

    func testClockRoute_ClientSecretExpiredInMockTime_IsRefused_WhileItsTwinAt599SecondsWorks() async throws {
        let mock = try frozenClient()
        let secret = try await mock.secret("com.example.app", lifetime: 600)
        func clientCredentials() async throws -> MockAnswer {
            try await mock.postForm("/auth/token", [("client_id", "com.example.app"), ("client_secret", secret),
                                                ("grant_type", "client_credentials"), ("scope", "user.migration")])
        }
        assertStatus(try await moveClock(mock, #"{"advance":599}"#), 200)
        try assertTokenAnswer(try await clientCredentials(), keys: ["access_token", "token_type", "expires_in"])
        assertStatus(try await moveClock(mock, #"{"advance":2}"#), 200)
        assertAppleError(try await clientCredentials(), #"{"error":"invalid_client"}"#)
    }

    // MARK: - /__mock/keys

    func testKeysRoute_ListsEveryKeyWithStateAndTimes() async throws {
        let mock = try frozenClient()
        let initial = #"{"active_kid":"W2ek7HdPaL","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"},"#
            + #"{"activated_at":null,"kid":"Ymq4vB9xTz","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"},"#
            + #"{"activated_at":null,"kid":"r8TcNf3QsJ","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"}]}"#
        assertControl(try await mock.get("/__mock/keys"), 200, initial)
        assertStatus(try await moveClock(mock, #"{"advance":60}"#), 200)
        assertControl(try await send(mock, "DELETE", "/__mock/keys/r8TcNf3QsJ"), 200, #"{"kid":"r8TcNf3QsJ","state":"retired"}"#)
        assertStatus(try await moveClock(mock, #"{"advance":60}"#), 200)
        assertControl(try await mock.postJSON("/__mock/keys/Ymq4vB9xTz/activate", ""), 200, #"{"kid":"Ymq4vB9xTz","state":"active"}"#)
        let later = #"{"active_kid":"Ymq4vB9xTz","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"},"#
            + #"{"activated_at":"2023-11-14T22:15:20Z","kid":"Ymq4vB9xTz","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"},"#
            + #"{"activated_at":null,"kid":"r8TcNf3QsJ","published_at":"2023-11-14T22:13:20Z","retired_at":"2023-11-14T22:14:20Z","state":"retired"}]}"#
        assertControl(try await mock.get("/__mock/keys"), 200, later)
    }

    func testKeysRoute_PublishesAGeneratedOrNamedKey_WithoutSigningWithIt() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"Custom1"}"#), 201, #"{"kid":"Custom1","state":"published"}"#)
        let generated = try await mock.postJSON("/__mock/keys", "")
        XCTAssertEqual(generated.status, 201, generated.text)
        let kid = try XCTUnwrap(try jsonObject(generated.body)["kid"]?.stringValue)
        XCTAssertTrue(matches(kid, "^[A-Za-z0-9]{10}$"), kid)
        XCTAssertEqual(generated.text, #"{"kid":"\#(kid)","state":"published"}"#)
        let kids = try await publishedKids(mock)
        XCTAssertEqual(kids, (Self.initialKeys + ["Custom1", kid]).sorted())
        let keyState = try await keyState(mock, "Custom1")
        XCTAssertEqual(keyState, "published")
        let mintedKid = try CompactJWS.parse(try await mintIDToken(mock)).keyID
        XCTAssertEqual(mintedKid, "W2ek7HdPaL")
    }

    func testKeysRoute_PublishesASuppliedPEM_UnderANewKid() async throws {
        let mock = try frozenClient()
        let pem = try String(contentsOfFile: repositoryRoot + "/Keys/signing/Ymq4vB9xTz.pem", encoding: .utf8)
        assertControl(try await mock.postJSON("/__mock/keys", jsonText(["kid": "Copy1", "pem": .string(pem)])), 201, #"{"kid":"Copy1","state":"published"}"#)
        let set = try await jwks(mock)
        XCTAssertEqual(try XCTUnwrap(set.key(withID: "Copy1")).n, try XCTUnwrap(set.key(withID: "Ymq4vB9xTz")).n)
        // Signing with it: tokens verify under the supplied key's JWK.
        assertStatus(try await mock.postJSON("/__mock/keys/Copy1/activate", ""), 200)
        let token = try await mintIDToken(mock)
        XCTAssertEqual(try CompactJWS.parse(token).keyID, "Copy1")
        let tokenVerifies = try await verifiesAgainstPublishedKeys(mock, token)
        XCTAssertEqual(tokenVerifies, true)
    }

    func testKeysRoute_RefusesDuplicateBadKidAndBadPEM() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"Ymq4vB9xTz"}"#), 409,
                      #"{"error":"a key with this kid exists already","field":"kid","kid":"Ymq4vB9xTz"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"bad-kid!"}"#), 400,
                      #"{"error":"expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)","field":"kid"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"ElevenChars"}"#), 400,
                      #"{"error":"expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)","field":"kid"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":7}"#), 400, #"{"error":"expected a string","field":"kid"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"Custom1","use":"sig"}"#), 400,
                      #"{"error":"unknown field (expected one of: kid, pem)","field":"use"}"#)
        let junk = try await mock.postJSON("/__mock/keys", #"{"kid":"Custom2","pem":"not a pem"}"#)
        XCTAssertEqual(junk.status, 400)
        let junkBody = try jsonObject(junk.body)
        XCTAssertEqual(junkBody.keys, ["error", "field"])
        XCTAssertEqual(junkBody["field"], "pem")
        XCTAssertTrue(junkBody["error"]?.stringValue?.hasPrefix("expected a PEM RSA private key (PKCS#8): ") == true, junk.text)
        let ecKey = try String(contentsOfFile: repositoryRoot + "/Keys/AuthKey_MOCKKEY001.p8", encoding: .utf8)
        let ec = try await mock.postJSON("/__mock/keys", jsonText(["kid": "Custom3", "pem": .string(ecKey)]))
        XCTAssertEqual(ec.status, 400)
        XCTAssertEqual(try jsonObject(ec.body)["field"], "pem")
        let kids = try await publishedKids(mock)
        XCTAssertEqual(kids, Self.initialKeys.sorted())
        let keyCount = try await keyList(mock)["keys"]?.arrayValue?.count
        XCTAssertEqual(keyCount, 3)
    }

    func testKeysRoute_RotatePublishesAndActivatesAFreshKey_KeepingThePreviousPublished() async throws {
        let mock = try frozenClient()
        // Refused twin first: rotate takes no fields.
        let refused = try await mock.postJSON("/__mock/keys/rotate", #"{"kid":"Custom1"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try jsonObject(refused.body)["field"], "kid")
        var kids = try await publishedKids(mock)
        XCTAssertEqual(kids, Self.initialKeys.sorted())
        let rotated = try await mock.postJSON("/__mock/keys/rotate", "")
        XCTAssertEqual(rotated.status, 200, rotated.text)
        let kid = try XCTUnwrap(try jsonObject(rotated.body)["kid"]?.stringValue)
        XCTAssertTrue(matches(kid, "^[A-Za-z0-9]{10}$"), kid)
        assertControl(rotated, 200, #"{"kid":"\#(kid)","previous":"W2ek7HdPaL","retired":[],"state":"active"}"#)
        let fetched = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched, .string(kid))
        kids = try await publishedKids(mock)
        XCTAssertEqual(kids, (Self.initialKeys + [kid]).sorted())
        let keyState = try await keyState(mock, "W2ek7HdPaL")
        XCTAssertEqual(keyState, "published")
        let token = try await mintIDToken(mock)
        XCTAssertEqual(try CompactJWS.parse(token).keyID, kid)
        let tokenVerifies = try await verifiesAgainstPublishedKeys(mock, token)
        XCTAssertEqual(tokenVerifies, true)
    }

    func testKeysRoute_ActivateRefusesUnknownAndRetiredKids_AndOtherMethods() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/keys/Nope1/activate", ""), 404, #"{"error":"no key with this kid","field":"kid","kid":"Nope1"}"#)
        assertStatus(try await send(mock, "DELETE", "/__mock/keys/r8TcNf3QsJ"), 200)
        assertControl(try await mock.postJSON("/__mock/keys/r8TcNf3QsJ/activate", ""), 409, #"{"error":"the key is retired","field":"kid","kid":"r8TcNf3QsJ"}"#)
        let get = try await mock.get("/__mock/keys/Ymq4vB9xTz/activate")
        assertControl(get, 405, #"{"error":"method not allowed (allowed: POST)","field":null}"#)
        XCTAssertEqual(get.headers["Allow"], "POST")
        assertStatus(try await mock.get("/__mock/keys/Ymq4vB9xTz/deactivate"), 404)
        let fetched = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched, "W2ek7HdPaL")
        // Twin: a published kid activates.
        assertControl(try await mock.postJSON("/__mock/keys/Ymq4vB9xTz/activate", ""), 200, #"{"kid":"Ymq4vB9xTz","state":"active"}"#)
        let fetched2 = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched2, "Ymq4vB9xTz")
    }

    func testKeysRoute_DeleteRefusesTheSigningKeyAndUnknownKids_AndAnswers405ToGet() async throws {
        let mock = try frozenClient()
        assertControl(try await send(mock, "DELETE", "/__mock/keys/W2ek7HdPaL"), 409,
                      #"{"error":"the key signs new tokens: activate another key before retiring it","field":"kid","kid":"W2ek7HdPaL"}"#)
        assertControl(try await send(mock, "DELETE", "/__mock/keys/Nope1"), 404, #"{"error":"no key with this kid","field":"kid","kid":"Nope1"}"#)
        let get = try await mock.get("/__mock/keys/Ymq4vB9xTz")
        assertControl(get, 405, #"{"error":"method not allowed (allowed: DELETE)","field":null}"#)
        XCTAssertEqual(get.headers["Allow"], "DELETE")
        var kids = try await publishedKids(mock)
        XCTAssertEqual(kids, Self.initialKeys.sorted())
        // Twins: a published key that does not sign is retired; retiring it again is a conflict.
        assertControl(try await send(mock, "DELETE", "/__mock/keys/Ymq4vB9xTz"), 200, #"{"kid":"Ymq4vB9xTz","state":"retired"}"#)
        assertControl(try await send(mock, "DELETE", "/__mock/keys/Ymq4vB9xTz"), 409, #"{"error":"the key is retired","field":"kid","kid":"Ymq4vB9xTz"}"#)
        kids = try await publishedKids(mock)
        XCTAssertEqual(kids, ["W2ek7HdPaL", "r8TcNf3QsJ"])
    }

    func testKeysRoute_AfterDelete_TheKidIsGoneAndTokensItSignedFindNoKey() async throws {
        let mock = try frozenClient()
        let old = try await mintIDToken(mock)
        XCTAssertEqual(try CompactJWS.parse(old).keyID, "W2ek7HdPaL")
        assertStatus(try await mock.postJSON("/__mock/keys/rotate", ""), 200)
        let new = try await mintIDToken(mock)
        // While published, the old key still verifies what it signed.
        var oldVerifies = try await verifiesAgainstPublishedKeys(mock, old)
        XCTAssertEqual(oldVerifies, true)
        assertControl(try await send(mock, "DELETE", "/__mock/keys/W2ek7HdPaL"), 200, #"{"kid":"W2ek7HdPaL","state":"retired"}"#)
        let stillPublished = try await publishedKids(mock).contains("W2ek7HdPaL")
        XCTAssertFalse(stillPublished)
        oldVerifies = try await verifiesAgainstPublishedKeys(mock, old)
        XCTAssertNil(oldVerifies)
        let newVerifies = try await verifiesAgainstPublishedKeys(mock, new)
        XCTAssertEqual(newVerifies, true)
        let keyState = try await keyState(mock, "W2ek7HdPaL")
        XCTAssertEqual(keyState, "retired")
    }

    // MARK: - /__mock/users

    func testUsersRoute_AddsAUser_AnsweringItsSubAndRelayAddressPerTeam() async throws {
        let mock = try startTwoTeams()
        let id = freshUserID()
        let response = try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson","hide_email":true,"real_user_status":1}"#)
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
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"\#(other)","email":"\#(other)@example.com"}"#), 201)
        let listed = try await mock.get("/__mock/users")
        XCTAssertEqual(listed.status, 200)
        let users = try XCTUnwrap(try jsonObject(listed.body)["users"]?.arrayValue).compactMap(\.objectValue)
        XCTAssertEqual(users.map { $0["id"]?.stringValue }, ["alice", "bob", "carol", id, other])
        XCTAssertEqual(users[4]["given_name"], "")
        XCTAssertEqual(users[4]["hide_email"], false)
        XCTAssertEqual(users[4]["real_user_status"], .int(2))
        XCTAssertEqual(users[4]["relay_domain"], "privaterelay.appleid.com")
        // A user on the new domain: the same local part, the new domain, in every team.
        let moved = freshUserID()
        let new = try jsonObject(try await mock.postJSON("/__mock/users", #"{"id":"\#(moved)","email":"\#(moved)@example.com","relay_domain":"private.icloud.com"}"#).body)
        XCTAssertEqual(new["relay_domain"], "private.icloud.com")
        XCTAssertEqual(new["teams"]?.arrayValue?.compactMap { $0.objectValue?["relay_email"]?.stringValue },
                       ["MOCKTEAM01", Self.teamB].map { Identity.relayAddress(teamID: $0, userID: moved, domain: .privateICloud) })
        XCTAssertTrue(Identity.relayAddress(teamID: "MOCKTEAM01", userID: moved, domain: .privateICloud).hasSuffix("@private.icloud.com"))
    }

    func testUsersRoute_RefusesDuplicateMissingAndBadFields() async throws {
        let mock = try frozenClient()
        let id = try await addUser(mock)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"other@example.com"}"#), 409,
                      #"{"error":"a user with id \"\#(id)\" exists already","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"alice","email":"alice2@example.com"}"#), 409,
                      #"{"error":"a user with id \"alice\" exists already","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin"}"#), 400, #"{"error":"missing required field","field":"email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"email":"erin@example.com"}"#), 400, #"{"error":"missing required field","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"bad id!","email":"erin@example.com"}"#), 400,
                      #"{"error":"expected 1 to 64 letters, digits, '.', '-' or '_'","field":"id"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin.example.com"}"#), 400,
                      #"{"error":"expected an email address","field":"email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","real_user_status":3}"#), 400,
                      #"{"error":"expected 0, 1 or 2","field":"real_user_status"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","hide_email":"yes"}"#), 400,
                      #"{"error":"expected true or false","field":"hide_email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","phone":"1"}"#), 400,
                      #"{"error":"unknown field (expected one of: id, email, given_name, family_name, hide_email, real_user_status, relay_domain)","field":"phone"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","relay_domain":"icloud.com"}"#), 400,
                      #"{"error":"expected \"private.icloud.com\" or \"privaterelay.appleid.com\"","field":"relay_domain"}"#)
        let fetched = try await mock.get("/__mock/users")
        let users = try XCTUnwrap(try jsonObject(fetched.body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol", id])
        // Twin: the same user with every field right is accepted.
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin@example.com","real_user_status":0}"#), 201)
    }

    func testUsersRoute_RefusesIdsShapedLikeASub_AndEmailsWithControlCharacters() async throws {
        let mock = try frozenClient()
        // alice's sub as an id would shadow her in every lookup by user (probe N13).
        let aliceSub = teamSub("alice")
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(aliceSub)","email":"impostor@example.com"}"#), 400,
                      #"{"error":"expected an id that is not shaped like a sub (NNNNNN.<32 hex>.NNNN)","field":"id"}"#)
        for email in [#"a\u0000b@example.com"#, #"a\tb@c"#, #"a\r\nb@example.com"#, #"a@example.com\r\n"#, #"a\u007fb@example.com"#] {
            assertControl(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"\#(email)"}"#), 400,
                          #"{"error":"expected an email address","field":"email"}"#)
        }
        // The twins: an id with the same parts but another shape, and a plain email.
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"\#(aliceSub).x","email":"erin@example.com"}"#), 201)
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"erin","email":"erin+tag@example.com"}"#), 201)
    }

    func testUsersRoute_RuntimeUserGetsUserJSONOnFirstAuthorizationOnly() async throws {
        let mock = try frozenClient()
        let id = freshUserID()
        // Before it is added, signing in as it is refused, naming the user.
        let unknown = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"\#(id)"}"#)
        assertControl(unknown, 400, #"{"apple_error":"invalid_request","error":"no user \"\#(id)\" in the scenario","field":"user"}"#)
        assertStatus(try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson"}"#), 201)
        let first = try await mock.headlessAuthorize(user: id)
        XCTAssertEqual(first["user"], #"{"name":{"firstName":"Carol","lastName":"Carlson"},"email":"\#(id)@example.com"}"#)
        let tokens = try assertTokenAnswer(try await mock.redeem(try XCTUnwrap(first["code"])), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let claims = try await mock.verifiedClaims(tokens["id_token"]?.stringValue)
        XCTAssertEqual(claims["sub"], .string(teamSub(id)))
        XCTAssertEqual(claims["email"], .string("\(id)@example.com"))
        let second = try await mock.headlessAuthorize(user: id)
        XCTAssertNil(second["user"])
        XCTAssertNotNil(second["code"])
    }

    func testUsersRoute_RuntimeUserHidingEmail_GetsTheRelayAddressTheRouteAnswered() async throws {
        let mock = try frozenClient()
        let id = freshUserID()
        let added = try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","hide_email":true}"#)
        let relay = try XCTUnwrap(try jsonObject(added.body)["teams"]?.arrayValue?.first?.objectValue?["relay_email"]?.stringValue)
        let native = try jsonObject(try await mock.nativeSignIn(user: id).body)
        XCTAssertEqual(native["email"], .string(relay))
        XCTAssertEqual(native["user"], .string(teamSub(id)))
        // Twin: a runtime user who shares the address gets the real one.
        let sharing = try await addUser(mock)
        let signedIn = try jsonObject(try await mock.nativeSignIn(user: sharing).body)["email"]
        XCTAssertEqual(signedIn, .string("\(sharing)@example.com"))
    }

    // MARK: - POST /__mock/reset

    func testResetRoute_ReturnsEverythingToTheScenariosInitialState() async throws {
        let mock = try frozenClient()
        let id = try await addUser(mock)
        let authorized = try await mock.headlessAuthorize(user: id)["user"]
        XCTAssertNotNil(authorized)
        let pending = try await mock.webCode()
        let tokens2 = try await mock.webTokens(user: "bob")
        let refreshToken = try XCTUnwrap(tokens2["refresh_token"]?.stringValue)
        assertStatus(try await mock.postJSON("/__mock/keys/rotate", ""), 200)
        assertStatus(try await moveClock(mock, #"{"advance":120}"#), 200)
        // Refused twin: reset takes no fields, and resets nothing when refused.
        let refused = try await mock.postJSON("/__mock/reset", #"{"keep":"users"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try jsonObject(refused.body)["field"], "keep")
        let now = try await mock.now()
        XCTAssertEqual(now, frozenNow + 120)

        assertControl(try await mock.postJSON("/__mock/reset", ""), 200, #"{"active_kid":"W2ek7HdPaL","now":"2023-11-14T22:13:20Z"}"#)
        // Users added at runtime are gone.
        let fetched2 = try await mock.get("/__mock/users")
        let users = try XCTUnwrap(try jsonObject(fetched2.body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol"])
        let signIn = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"\#(id)"}"#)
        assertControl(signIn, 400, #"{"apple_error":"invalid_request","error":"no user \"\#(id)\" in the scenario","field":"user"}"#)
        // Codes and tokens from before are refused.
        assertAppleError(try await mock.redeem(pending), Self.expiredCode)
        assertAppleError(try await mock.refresh(refreshToken), #"{"error":"invalid_grant"}"#)
        // The clock and the keys are back.
        let fetched = try jsonObject(try await mock.get("/__mock/clock").body)["epoch"]
        XCTAssertEqual(fetched, .int(frozenNow))
        let kids = try await publishedKids(mock)
        XCTAssertEqual(kids, Self.initialKeys.sorted())
        let keyCount = try await keyList(mock)["keys"]?.arrayValue?.count
        XCTAssertEqual(keyCount, 3)
        // Consents are gone: alice authorizes for the first time again, and what is issued now works.
        let again = try await mock.headlessAuthorize()
        XCTAssertNotNil(again["user"])
        assertStatus(try await mock.redeem(try XCTUnwrap(again["code"])), 200)
    }

    // MARK: - GET /__mock/credential-state, one test per state

    func testCredentialStateRoute_IsNotFound_BeforeSignIn_AndForAnUnknownUser() async throws {
        let mock = try frozenClient()
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"notFound"}"#)
        assertControl(try await credentialState(mock, user: "zed"), 200, #"{"state":"notFound"}"#)
        assertControl(try await credentialState(mock, user: teamSub("zed")), 200, #"{"state":"notFound"}"#)
        // Twin: after a sign-in, the same question is answered authorized.
        assertStatus(try await mock.nativeSignIn(), 200)
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
    }

    func testCredentialStateRoute_IsAuthorized_AfterSignIn_ByIDOrSub() async throws {
        let mock = try frozenClient()
        let id = try await addUser(mock)
        assertStatus(try await mock.nativeSignIn(user: id), 200)
        assertControl(try await credentialState(mock, user: id), 200, #"{"state":"authorized"}"#)
        assertControl(try await credentialState(mock, user: teamSub(id)), 200, #"{"state":"authorized"}"#)
        assertControl(try await credentialState(mock, user: id, clientID: "com.example.web"), 200, #"{"state":"authorized"}"#)
        assertControl(try await credentialState(mock, user: "bob"), 200, #"{"state":"notFound"}"#)
    }

    func testCredentialStateRoute_IsRevoked_AfterTheAppRevokes() async throws {
        let mock = try frozenClient()
        let tokens = try await mock.webTokens()
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
        assertStatus(try await mock.revoke(try XCTUnwrap(tokens["refresh_token"]?.stringValue)), 200)
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"revoked"}"#)
        assertControl(try await credentialState(mock, user: teamSub("alice"), clientID: "com.example.web"), 200, #"{"state":"revoked"}"#)
    }

    func testCredentialStateRoute_IsTransferred_AfterATeamTransfer() async throws {
        let mock = try startTwoTeams()
        assertStatus(try await mock.nativeSignIn(user: "bob"), 200)
        assertStatus(try await mock.nativeSignIn(user: "alice"), 200)
        let granted = try await mock.clientCredentials("com.example.app")
        let bearer = try XCTUnwrap(try jsonObject(granted.body)["access_token"]?.stringValue)
        let transfer = try await mock.postForm("/auth/usermigrationinfo",
                                           [("sub", teamSub("bob")), ("target", Self.teamB), ("client_id", "com.example.app"),
                                            ("client_secret", try await mock.secret("com.example.app"))],
                                           headers: [("Authorization", "Bearer \(bearer)")])
        XCTAssertEqual(transfer.status, 200, transfer.text)
        assertControl(try await credentialState(mock, user: "bob"), 200, #"{"state":"transferred"}"#)
        assertControl(try await credentialState(mock, user: teamSub("bob")), 200, #"{"state":"transferred"}"#)
        // Twin: alice was not transferred.
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
    }

    func testCredentialStateRoute_RefusesMissingUnknownAndRepeatedParameters() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.get("/__mock/credential-state?client_id=com.example.app"), 400,
                      #"{"error":"missing required parameter (a user id or sub)","field":"user"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=&client_id=com.example.app"), 400,
                      #"{"error":"missing required parameter (a user id or sub)","field":"user"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=alice"), 400, #"{"error":"missing required parameter","field":"client_id"}"#)
        assertControl(try await credentialState(mock, user: "alice", clientID: "com.nope"), 404, #"{"error":"no client \"com.nope\" in the scenario","field":"client_id"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=alice&client_id=com.example.app&team=x"), 400,
                      #"{"error":"unknown parameter (expected user, client_id)","field":"team"}"#)
        assertControl(try await mock.get("/__mock/credential-state?user=alice&user=bob&client_id=com.example.app"), 400,
                      #"{"error":"given more than once","field":"user"}"#)
        assertStatus(try await mock.postJSON("/__mock/credential-state", ""), 405)
        assertControl(try await mock.get("/__mock/credential-state?user=alice&client_id=com.example.app"), 200, #"{"state":"notFound"}"#)
    }

    // MARK: - The control guard covers the new routes

    func testControlGuard_RefusesAForeignHost_OnEveryNewRoute_AndChangesNothing() async throws {
        let mock = try frozenClient()
        let routes: [(String, String, String?)] = [
            ("GET", "/__mock/clock", nil), ("POST", "/__mock/clock", #"{"advance":60}"#),
            ("GET", "/__mock/keys", nil), ("POST", "/__mock/keys", #"{"kid":"Custom1"}"#), ("POST", "/__mock/keys/rotate", nil),
            ("POST", "/__mock/keys/Ymq4vB9xTz/activate", nil), ("DELETE", "/__mock/keys/r8TcNf3QsJ", nil),
            ("GET", "/__mock/users", nil), ("POST", "/__mock/users", #"{"id":"mallory","email":"m@example.com"}"#),
            ("POST", "/__mock/reset", nil), ("GET", "/__mock/credential-state?user=alice&client_id=com.example.app", nil),
        ]
        assertStatus(try await moveClock(mock, #"{"advance":1}"#), 200)
        for (method, path, body) in routes {
            assertControl(try await send(mock, method, path, host: "attacker.example", body: body), 403,
                          #"{"error":"Host \"attacker.example\" is not allowed for the control API (allow a name with --allowed-host)","field":"Host"}"#)
        }
        let now = try await mock.now()
        XCTAssertEqual(now, frozenNow + 1, "neither moved nor reset")
        let keyCount = try await keyList(mock)["keys"]?.arrayValue?.count
        XCTAssertEqual(keyCount, 3)
        let keyState = try await keyState(mock, "r8TcNf3QsJ")
        XCTAssertEqual(keyState, "published")
        let fetched = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched, "W2ek7HdPaL")
        let fetched2 = try await mock.get("/__mock/users")
        let users = try XCTUnwrap(try jsonObject(fetched2.body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol"], "mallory was not added")
        // A cross-site Origin and a text/plain body are refused too.
        let crossSite = try await mock.send("POST", "/__mock/reset", headers: [("Origin", "https://attacker.example")])
        assertControl(crossSite, 403, #"{"error":"cross-origin requests to the control API are refused","field":"Origin"}"#)
        let plain = try await mock.send("POST", "/__mock/clock", headers: [("Content-Type", "text/plain")], body: Array(#"{"advance":60}"#.utf8))
        assertControl(plain, 415, #"{"error":"expected Content-Type: application/json","field":"Content-Type"}"#)
        let now2 = try await mock.now()
        XCTAssertEqual(now2, frozenNow + 1)
        // Twins: the same requests under an IP literal are served.
        let port = 8080
        assertStatus(try await send(mock, "GET", "/__mock/clock", host: "127.0.0.1:\(port)"), 200)
        assertStatus(try await send(mock, "POST", "/__mock/clock", host: "127.0.0.1:\(port)", body: #"{"advance":60}"#), 200)
        assertStatus(try await send(mock, "DELETE", "/__mock/keys/r8TcNf3QsJ", host: "127.0.0.1:\(port)"), 200)
        assertStatus(try await send(mock, "POST", "/__mock/users", host: "127.0.0.1:\(port)", body: #"{"id":"mallory","email":"m@example.com"}"#), 201)
        assertStatus(try await send(mock, "POST", "/__mock/reset", host: "127.0.0.1:\(port)"), 200)
        let now3 = try await mock.now()
        XCTAssertEqual(now3, frozenNow)
    }
}

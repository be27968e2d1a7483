import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

// The control routes' suites' shared factories (split from ControlRoutesTests along its MARKs):
// every helper goes through `MockClient`, so the suites run in memory.

/// What the control routes' suites share.
enum ControlFixture {
    /// The real time `startClockedMock` starts from.
    static let realStart: Double = 1_750_000_000
    /// The kids of the repository's signing keys.
    static let initialKeys = ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"]
    /// The second team of `startTwoTeams`, its App ID and its developer key.
    static let teamB = "MOCKTEAM02"
    static let teamBApp = "com.teamb.app"
    static let teamBKey = try! P256PrivateKey.generate()
    /// Apple's answer to a code past its lifetime.
    static let expiredCode = #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#
}

extension XCTestCase {

    /// A mock whose clock starts at `frozenNow` (frozen or running) on real time the test moves.
    func startClockedMock(frozen: Bool = true, _ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in })
        throws -> (any MockClient, ManualRealTime) {
        let realTime = ManualRealTime(ControlFixture.realStart)
        let mock = try startClient { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: frozen)
            configuration.realTime = { realTime.now }
            adjust(&configuration)
        }
        return (mock, realTime)
    }

    /// A frozen mock whose scenario has a second team with one App ID.
    func startTwoTeamMock() throws -> any MockClient {
        let pem = try ControlFixture.teamBKey.publicKey.pem
        return try frozenClient { configuration in
            configuration.scenario.teams.append(Scenario.Team(
                teamID: ControlFixture.teamB, developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY002", publicKeyPEM: pem)],
                clients: [Scenario.Client(clientID: ControlFixture.teamBApp, kind: .appID)]))
        }
    }
}

/// A request with any method; a body is sent as JSON.
func controlRequest(_ mock: any MockClient, _ method: String, _ path: String, _ body: String? = nil) async throws -> MockAnswer {
    try await mock.send(method, path, headers: body == nil ? [] : [("Content-Type", "application/json")],
                                  body: Array((body ?? "").utf8))
}

/// A request with this `Host` (rather than `localhost`); a body is sent as JSON.
func controlRequest(_ mock: any MockClient, _ method: String, _ path: String, host: String, body: String? = nil) async throws -> MockAnswer {
    try await mock.send(method, path, headers: [("Host", host)] + (body == nil ? [] : [("Content-Type", "application/json")]),
                        body: Array((body ?? "").utf8))
}

/// `POST /__mock/clock`.
func moveClock(_ mock: any MockClient, _ body: String) async throws -> MockAnswer {
    try await mock.postJSON("/__mock/clock", body)
}

/// Fails unless `response` is a control answer with exactly this status and body.
func assertControl(_ response: MockAnswer, _ status: Int, _ body: String, _ message: String = "",
                           file: StaticString = #filePath, line: UInt = #line) {
    XCTAssertEqual(response.status, status, message, file: file, line: line)
    XCTAssertEqual(response.text, body, message, file: file, line: line)
    XCTAssertEqual(response.headers["Content-Type"], "application/json", file: file, line: line)
}

/// The clock body for a mock at `epoch`.
func clockBody(_ epoch: Int64, frozen: Bool, offset: Int64) -> String {
    #"{"epoch":\#(epoch),"frozen":\#(frozen),"now":"\#(RFC3339.format(epoch))","offset":\#(offset)}"#
}

/// `GET /auth/keys` parsed by the JOSE layer.
func jwks(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> JWKSet {
    let response = try await mock.get("/auth/keys")
    XCTAssertEqual(response.status, 200, file: file, line: line)
    return try JWKSet(json: try JSONParser.parse(response.body))
}

/// The kids at `/auth/keys`, sorted.
func publishedKids(_ mock: any MockClient) async throws -> [String] {
    try await jwks(mock).keys.map(\.kid).sorted()
}

/// `GET /__mock/keys` parsed.
func keyList(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> JSONObject {
    let response = try await mock.get("/__mock/keys")
    XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
    return try jsonObject(response.body, file: file, line: line)
}

/// The state `GET /__mock/keys` gives `kid`.
func keyState(_ mock: any MockClient, _ kid: String) async throws -> String? {
    try await keyList(mock)["keys"]?.arrayValue?.first { $0.objectValue?["kid"]?.stringValue == kid }?.objectValue?["state"]?.stringValue
}

/// An id_token minted through `POST /__mock/id-token`.
func mintIDToken(_ mock: any MockClient, user: String = "alice", file: StaticString = #filePath, line: UInt = #line) async throws -> String {
    let response = try await mock.postJSON("/__mock/id-token", #"{"user":"\#(user)","client_id":"com.example.app"}"#)
    XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
    return try XCTUnwrap(try jsonObject(response.body, file: file, line: line)["id_token"]?.stringValue, file: file, line: line)
}

/// Whether `token` verifies under the key `/auth/keys` publishes for its kid (nil when none).
func verifiesAgainstPublishedKeys(_ mock: any MockClient, _ token: String) async throws -> Bool? {
    let jws = try CompactJWS.parse(token)
    guard let jwk = try await jwks(mock).key(withID: try XCTUnwrap(jws.keyID)) else { return nil }
    return jws.verifyRS256(with: try jwk.rsaPublicKey())
}

/// A user id nobody has used, so a first authorization never leaks between tests.
func freshUserID() -> String {
    "user-" + UUID().uuidString.prefix(8).lowercased()
}

/// `POST /__mock/users` for a fresh user; returns its id.
func addUser(_ mock: any MockClient, hideEmail: Bool = false, file: StaticString = #filePath, line: UInt = #line) async throws -> String {
    let id = freshUserID()
    let response = try await mock.postJSON("/__mock/users",
                                       #"{"id":"\#(id)","email":"\#(id)@example.com","given_name":"Carol","family_name":"Carlson","hide_email":\#(hideEmail)}"#)
    XCTAssertEqual(response.status, 201, response.text, file: file, line: line)
    return id
}

/// `GET /__mock/credential-state`.
func credentialState(_ mock: any MockClient, user: String, clientID: String = "com.example.app") async throws -> MockAnswer {
    try await mock.get("/__mock/credential-state?" + HTTPForm.encode([("user", user), ("client_id", clientID)]))
}

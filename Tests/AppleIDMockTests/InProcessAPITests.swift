@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import Synchronization
import XCTest

/// The in-process API a Swift backend's test suite uses (`AppleIDMockServer+Testing`), end to
/// end: what it returns is what Apple's endpoints, reached over HTTP, accept.
final class InProcessAPITests: XCTestCase {
    private func secret(_ clientID: String, at seconds: Int64) throws -> String {
        try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: clientID, privateKey: mockDeveloperKey,
                              issuedAt: seconds, lifetime: 3600)
    }

    private func token(_ mock: AppleIDMockServer, _ form: [String: String]) throws -> (status: Int, body: JSONObject) {
        let body = form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
        let response = try HTTPClient().send("POST", url: mock.baseURL + "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                             body: Array(body.utf8))
        return (response.status, try jsonObject(response.body))
    }

    func testNativeAndWebSignIn_ClockKeysEventsAndReset_ThroughTheInProcessAPI() async throws {
        let received = Mutex<[String]>([])
        var router = Router()
        router.add(.post, "/apple", immediate: { request in
            received.withLock { $0.append(String(decoding: request.body, as: UTF8.self)) }
            return .text("ok")
        })
        var receiverConfiguration = HTTPServerConfiguration()
        receiverConfiguration.port = 0
        let receiver = try HTTPServer.start(configuration: receiverConfiguration, routes: router.build())
        addTeardownBlock { await receiver.stop() }
        var scenario = Scenario.default
        scenario.teams[0].notificationURL = receiver.url + "/apple"
        scenario.clock = .init(start: frozenNow, frozen: true)
        let mock = try AppleIDMockServer.startForTesting(scenario: scenario, keysDirectory: repositoryRoot + "/Keys/signing")
        // Teardown blocks run last first: the mock's notifications end before the receiver does.
        addTeardownBlock { await mock.stop() }
        XCTAssertTrue(mock.baseURL.hasPrefix("http://127.0.0.1:"))

        // Native: the code redeems at /auth/token over the wire.
        let native = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        XCTAssertEqual(native.email, "alice@example.com")
        let redeemed = try token(mock, ["client_id": "com.example.app", "client_secret": try secret("com.example.app", at: frozenNow),
                                        "grant_type": "authorization_code", "code": native.authorizationCode])
        XCTAssertEqual(redeemed.status, 200)
        XCTAssertNotNil(redeemed.body["refresh_token"]?.stringValue)

        // Web: the callback's fields; the user JSON only the first time.
        let first = try await mock.signInWeb(user: "bob", clientID: "com.example.web", redirectURI: "https://app.example.com/callback", state: "s1", nonce: "n1")
        XCTAssertEqual(first.state, "s1")
        XCTAssertNotNil(first.user)
        XCTAssertEqual(try CompactJWS.parse(try XCTUnwrap(first.idToken)).payloadJSON?["nonce"], "n1")
        let later = try await mock.signInWeb(user: "bob", clientID: "com.example.web", redirectURI: "https://app.example.com/callback")
        XCTAssertNil(later.user)
        let evil = await assertThrowsAsync { try await mock.signInWeb(user: "bob", clientID: "com.example.web", redirectURI: "https://evil.example/callback") }
        XCTAssertEqual(evil as? MockControlError, MockControlError(field: "redirect_uri", message: "invalid_request: Invalid client id or web redirect url."))

        // The clock: a code outlives its five minutes only on paper.
        let expiring = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        try await mock.advanceClock(by: .seconds(301))
        let expired = try token(mock, ["client_id": "com.example.app", "client_secret": try secret("com.example.app", at: frozenNow + 301),
                                       "grant_type": "authorization_code", "code": expiring.authorizationCode])
        XCTAssertEqual(expired.status, 400)
        XCTAssertEqual(expired.body["error"], "invalid_grant")

        // Keys: the next token names the new kid.
        let kid = try await mock.rotateKeys()
        let signedByNewKey = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        XCTAssertEqual(try CompactJWS.parse(signedByNewKey.identityToken).keyID, kid)

        // Events: the notification reaches the receiver and the log says so.
        let fired = try await mock.fireEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        let id = try XCTUnwrap(fired)
        let log = await mock.notificationLog(after: id - 1, waitingUpTo: .seconds(20))
        XCTAssertEqual(log.first?.outcome, .delivered)
        XCTAssertEqual(received.withLock { $0 }, [#"{"payload":"\#(try XCTUnwrap(log.first?.jwt))"}"#])
        // (An unknown event type cannot be written in Swift; the route refuses it, AccountEventTests.)
        let unknownUser = await assertThrowsAsync { try await mock.fireEvent(.consentRevoked, user: "mallory", clientID: "com.example.app") }
        XCTAssertEqual(unknownUser as? MockControlError, MockControlError(field: "user", message: "no user \"mallory\""))

        // Reset: back to the scenario — bob's next web sign-in is a first one again.
        try await mock.reset()
        let again = try await mock.signInWeb(user: "bob", clientID: "com.example.web", redirectURI: "https://app.example.com/callback")
        XCTAssertNotNil(again.user)
    }

    func testClientSecret_IsAcceptedAtMockTime_AfterTheClockMovedFarAhead_AndOnlyForItsClient() async throws {
        let mock = try AppleIDMockServer.startForTesting(keysDirectory: repositoryRoot + "/Keys/signing")
        addTeardownBlock { await mock.stop() }
        try await mock.advanceClock(by: .seconds(400 * 86_400))
        let native = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        let wrongClient = try token(mock, ["client_id": "com.example.app", "client_secret": try mock.clientSecret(clientID: "com.example.web"),
                                           "grant_type": "authorization_code", "code": native.authorizationCode])
        XCTAssertEqual(wrongClient.status, 400)
        XCTAssertEqual(wrongClient.body["error"], "invalid_client")
        let redeemed = try token(mock, ["client_id": "com.example.app", "client_secret": try mock.clientSecret(clientID: "com.example.app"),
                                        "grant_type": "authorization_code", "code": native.authorizationCode])
        XCTAssertEqual(redeemed.status, 200)
    }
}

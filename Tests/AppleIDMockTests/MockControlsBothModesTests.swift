@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// One test body over `some MockControls`, run against the live server (port 0) and the mock in
/// memory (issue 36, "one testing surface"): what a Swift test does to the mock must not depend
/// on the harness.
final class MockControlsBothModesTests: XCTestCase {
    private static let codeKeys = ["access_token", "token_type", "expires_in", "refresh_token", "id_token"]

    private func configuration() -> AppleIDMockConfiguration {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        return configuration
    }

    func testExercise_Live() async throws {
        let mock = try AppleIDMockServer.startForTesting(scenario: configuration().scenario, keysDirectory: repositoryRoot + "/Keys/signing")
        addTeardownBlock { await mock.stop() }
        try await exercise(mock)
    }

    func testExercise_InMemory() async throws {
        let mock = try AppleIDMockServer.inMemory(configuration())
        addTeardownBlock { await mock.stop() }
        try await exercise(mock)
    }

    /// `POST /auth/token` for the app's `code` through the harness's HTTP door.
    private func exchange(_ mock: some MockControls, _ code: String) async throws -> HTTPResponse {
        let form = HTTPForm.encode([("client_id", "com.example.app"), ("client_secret", try mock.clientSecret(clientID: "com.example.app")),
                                   ("grant_type", "authorization_code"), ("code", code)])
        return await mock.respond(.post, "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array(form.utf8))
    }

    /// Native sign-in, the exchange over HTTP, a fault installed from Swift, `reset()`, and the
    /// clock expiring a code: each accepted step with its refused twin.
    func exercise(_ mock: some MockControls, file: StaticString = #filePath, line: UInt = #line) async throws {
        // Native sign-in, then the code exchanged at /auth/token, once.
        let first = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        XCTAssertEqual(first.user, teamSub("alice"), file: file, line: line)
        XCTAssertEqual(first.email, "alice@example.com", file: file, line: line)
        let exchanged = try await exchange(mock, first.authorizationCode)
        XCTAssertEqual(exchanged.status.code, 200, exchanged.text, file: file, line: line)
        XCTAssertEqual(try jsonObject(exchanged.body, file: file, line: line).keys, Self.codeKeys, file: file, line: line)
        let again = try await exchange(mock, first.authorizationCode)
        XCTAssertEqual(again.status.code, 400, file: file, line: line)
        XCTAssertEqual(again.text, #"{"error":"invalid_grant","error_description":"The code has already been used."}"#, file: file, line: line)

        // A password change ends the refresh token silently; an unknown user is refused, naming the field.
        let refreshToken = try XCTUnwrap(try jsonObject(exchanged.body, file: file, line: line)["refresh_token"]?.stringValue, file: file, line: line)
        func refresh() async throws -> HTTPResponse {
            let form = HTTPForm.encode([("client_id", "com.example.app"), ("client_secret", try mock.clientSecret(clientID: "com.example.app")),
                                       ("grant_type", "refresh_token"), ("refresh_token", refreshToken)])
            return await mock.respond(.post, "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array(form.utf8))
        }
        let alive = try await refresh()
        XCTAssertEqual(alive.status.code, 200, alive.text, file: file, line: line)
        try await mock.changePassword(user: "alice")
        let dead = try await refresh()
        XCTAssertEqual(dead.status.code, 400, file: file, line: line)
        XCTAssertEqual(dead.text, #"{"error":"invalid_grant"}"#, file: file, line: line)
        do {
            try await mock.changePassword(user: "mallory")
            XCTFail("a password change of no user", file: file, line: line)
        } catch {
            XCTAssertEqual(error.field, "user", file: file, line: line)
        }

        // A fault installed from Swift fires on the next matching request, once.
        let faultID = try await mock.installFault(try .http(.post, "/auth/token", .respond(status: 503, body: "down for a test"), times: 1))
        XCTAssertEqual(faultID, "f1", file: file, line: line)
        let signedIn = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        let faulted = try await exchange(mock, signedIn.authorizationCode)
        XCTAssertEqual(faulted.status.code, 503, file: file, line: line)
        XCTAssertEqual(faulted.text, "down for a test", file: file, line: line)
        XCTAssertEqual(mock.faults.map(\.id), ["f1"], file: file, line: line)
        XCTAssertEqual(mock.faults.first?.fired, 1, file: file, line: line)
        XCTAssertEqual(mock.faults.first?.remaining, 0, file: file, line: line)
        // The twin: spent, it lets the next request through to Apple's endpoint (the code was never seen).
        let through = try await exchange(mock, signedIn.authorizationCode)
        XCTAssertEqual(through.status.code, 200, through.text, file: file, line: line)

        // reset() removes a fault that would fire on every request.
        try await mock.installFault(try .http(.post, "/auth/token", .respond(status: 500)))
        let beforeReset = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        let refusedByFault = try await exchange(mock, beforeReset.authorizationCode)
        XCTAssertEqual(refusedByFault.status.code, 500, file: file, line: line)
        try await mock.reset()
        XCTAssertEqual(mock.faults.map(\.id), [], file: file, line: line)
        let afterReset = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        XCTAssertEqual(afterReset.email, "alice@example.com", "a first authorization again after the reset", file: file, line: line)
        let served = try await exchange(mock, afterReset.authorizationCode)
        XCTAssertEqual(served.status.code, 200, served.text, file: file, line: line)

        // advanceClock(by: 301 s): an unredeemed code has expired; one issued after the move redeems.
        let late = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        try await mock.advanceClock(by: .seconds(301))
        let expired = try await exchange(mock, late.authorizationCode)
        XCTAssertEqual(expired.status.code, 400, file: file, line: line)
        XCTAssertEqual(expired.text, #"{"error":"invalid_grant","error_description":"The code has expired or has been revoked."}"#, file: file, line: line)
        let fresh = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        let redeemed = try await exchange(mock, fresh.authorizationCode)
        XCTAssertEqual(redeemed.status.code, 200, redeemed.text, file: file, line: line)
    }
}

@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `serve --state FILE`: what a mock did survives a restart on its file (the world, the event
/// sequence, tokens, codes, keys, undelivered notifications); a file the mock must not use is
/// refused and left byte for byte as it was; `state export`/`import` round-trip it; an answer
/// goes out only once what it depends on is committed; old inert events are compacted away.
final class StateFileTests: XCTestCase {
    /// Every path a test made, removed (with `-wal` and `-shm`) in `tearDown`.
    var madePaths: [String] = []

    override func tearDown() {
        for path in madePaths {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        madePaths = []
        super.tearDown()
    }

    // MARK: - Factories

    /// A fresh path in the temporary directory (nothing there yet), removed in `tearDown`.
    func newPath(_ name: String = "state") -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
        madePaths.append(path)
        return path
    }

    /// The built-in scenario with the clock frozen at `frozenNow`, as `startFrozenMock` serves it.
    func frozenScenario() -> Scenario {
        var scenario = Scenario.default
        scenario.clock = .init(start: frozenNow, frozen: true)
        return scenario
    }

    /// The state file at `path` and its WAL copied to a new path: taken while a mock runs, the
    /// bytes a mock killed at that moment leaves behind.
    func handedOver(_ path: String) throws -> String {
        let copy = newPath("restart")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        }
        return copy
    }

    /// A state file made by a mock that signed alice in (web code redeemed), then stopped.
    func madeStateFile() throws -> String {
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        _ = try server.webTokens(user: "alice")
        server.stop()
        return path
    }

    /// The bytes of the file at `path`.
    func contents(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The world of `domain` as one comparable value.
    func snapshot(_ domain: AppleIDDomain) -> World.Snapshot {
        domain.worldSnapshot
    }

    /// The kids `/auth/keys` serves, sorted (the order is shuffled per fetch).
    func publishedKeyIDs(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let response = try server.get("/auth/keys")
        XCTAssertEqual(response.status, 200, file: file, line: line)
        let keys = try XCTUnwrap(try jsonObject(response.body)["keys"]?.arrayValue, file: file, line: line)
        return keys.compactMap { $0.objectValue?["kid"]?.stringValue }.sorted()
    }

    /// The `StateFileError` inside `error` (a mock's `AppleIDMockError.state`, or the error itself).
    func stateFileError(_ error: (any Error)?, file: StaticString = #filePath, line: UInt = #line) -> StateFileError? {
        if let error = error as? StateFileError { return error }
        guard case .state(let inner)? = error as? AppleIDMockError else {
            XCTFail("expected a state file error, got \(String(describing: error))", file: file, line: line)
            return nil
        }
        return inner
    }

    /// Fails unless opening `path` — as a mock serving `scenario` and as `StateFile` — is refused
    /// with `problem` and exactly `description`, leaving the file's bytes as they were.
    func assertRefused(_ path: String, scenario: Scenario? = nil, _ problem: StateFileError.Problem, _ description: String,
                               file: StaticString = #filePath, line: UInt = #line) throws {
        let scenario = scenario ?? frozenScenario()
        let before = try contents(path)
        let fromMock = stateFileError(assertThrows(try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
        }, file: file, line: line), file: file, line: line)
        XCTAssertEqual(fromMock, StateFileError(path: path, problem: problem), file: file, line: line)
        XCTAssertEqual(fromMock?.description, description, file: file, line: line)
        let direct = assertThrows(try StateFile(path: path, scenarioJSON: scenario.prettyJSON), file: file, line: line) as? StateFileError
        XCTAssertEqual(direct, StateFileError(path: path, problem: problem), file: file, line: line)
        XCTAssertEqual(try contents(path), before, "the refused file was changed", file: file, line: line)
    }

    /// Tokens and codes a mix of requests left behind.
    struct Mix {
        /// Alice's native code, redeemed.
        var redeemedCode: String
        /// Alice's refresh token (her consent lives).
        var aliceRefresh: String
        /// Bob's refresh token, revoked.
        var bobRefresh: String
        /// A web code of alice's, not redeemed.
        var pendingCode: String
    }

    /// Drives a realistic mix through HTTP: a native sign-in and its exchange, a refresh, a web
    /// sign-in whose token is revoked, a user added, a key rotation, a clock move, an account
    /// event, and a code left pending.
    func driveMix(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> Mix {
        let signIn = try server.nativeSignIn(user: "alice")
        XCTAssertEqual(signIn.status, 200, signIn.text, file: file, line: line)
        let credential = try jsonObject(signIn.body)
        XCTAssertEqual(credential["email"]?.stringValue, "alice@example.com", "a first authorization tells the email", file: file, line: line)
        let redeemedCode = try XCTUnwrap(credential["authorizationCode"]?.stringValue, file: file, line: line)
        let exchanged = try server.redeem(redeemedCode, clientID: "com.example.app", redirectURI: nil)
        XCTAssertEqual(exchanged.status, 200, exchanged.text, file: file, line: line)
        let aliceRefresh = try XCTUnwrap(try jsonObject(exchanged.body)["refresh_token"]?.stringValue, file: file, line: line)
        let refreshed = try server.refresh(aliceRefresh, clientID: "com.example.app")
        XCTAssertEqual(refreshed.status, 200, refreshed.text, file: file, line: line)
        let bob = try server.webTokens(user: "bob", file: file, line: line)
        let bobRefresh = try XCTUnwrap(bob["refresh_token"]?.stringValue, file: file, line: line)
        XCTAssertEqual(try server.revoke(bobRefresh, hint: "refresh_token").status, 200, file: file, line: line)
        let added = try server.postJSON("/__mock/users", #"{"id":"dora","email":"dora@example.com","given_name":"Dora","family_name":"Doe"}"#)
        XCTAssertEqual(added.status, 201, added.text, file: file, line: line)
        let rotated = try server.postJSON("/__mock/keys/rotate", "{}")
        XCTAssertEqual(rotated.status, 200, rotated.text, file: file, line: line)
        let moved = try server.postJSON("/__mock/clock", #"{"advance":60}"#)
        XCTAssertEqual(moved.status, 200, moved.text, file: file, line: line)
        XCTAssertEqual(try server.nativeSignIn(user: "dora", hideEmail: true).status, 200, file: file, line: line)
        let event = try server.postJSON("/__mock/events", #"{"type":"email-disabled","user":"dora","client_id":"com.example.app"}"#)
        XCTAssertEqual(event.status, 202, event.text, file: file, line: line)
        let pendingCode = try server.webCode(user: "alice", file: file, line: line)
        return Mix(redeemedCode: redeemedCode, aliceRefresh: aliceRefresh, bobRefresh: bobRefresh, pendingCode: pendingCode)
    }

    /// `value` with the member at `path` (object keys and array indexes) replaced by `replacement`.
    func replacing(_ value: JSONValue, at path: [any Sendable], with replacement: JSONValue) -> JSONValue {
        guard let first = path.first else { return replacement }
        let rest = Array(path.dropFirst())
        switch (value, first) {
        case (.object(var object), let key as String):
            object[key] = replacing(object[key] ?? .null, at: rest, with: replacement)
            return .object(object)
        case (.array(var array), let index as Int):
            array[index] = replacing(array[index], at: rest, with: replacement)
            return .array(array)
        default:
            XCTFail("no \(first) in \(value)")
            return value
        }
    }

    /// Fails unless importing `archive` into a new path throws exactly `description`, making no file.
    func assertImportRefused(_ archive: JSONValue, _ description: String, file: StaticString = #filePath, line: UInt = #line) {
        let target = newPath("import")
        let error = assertThrows(try StateArchive.importing(Array(JSONWriter.pretty(archive).utf8), into: target), file: file, line: line)
        XCTAssertEqual((error as? StateArchive.Failure)?.description, description, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "a refused import made the file", file: file, line: line)
    }

    /// Records inert `tokens-issued` events in operations of 100, each committed before the
    /// next, until the sequence reaches `sequence` (as many exchanges would, only faster).
    func recordInertEvents(_ domain: AppleIDDomain, until sequence: UInt64) async throws {
        while domain.lastEventSequence < sequence {
            domain.owner.perform { _, _, changes in
                for _ in 0..<100 { changes.emit(.tokensIssued(grantType: "client_credentials", clientID: "com.example.web", userID: nil, consentID: 0)) }
            }
            try await domain.events.barrier.settle()
        }
    }

    // MARK: - Restart

    func testRestart_RestoresTheWorldTokensCodesKeysAndSequence_WhenServedFromTheStateFile() throws {
        let path = newPath()
        let first = try startFrozenMock { $0.statePath = path }
        let mix = try driveMix(first)
        let before = snapshot(first.domain)
        let last = first.domain.lastEventSequence
        let keyIDs = try publishedKeyIDs(first)
        XCTAssertEqual(keyIDs.count, 4, "the three built-in keys and the rotated one")
        first.stop()

        let second = try startFrozenMock { $0.statePath = path }
        defer { second.stop() }
        XCTAssertEqual(snapshot(second.domain), before, "the restarted world is the one that stopped")
        XCTAssertEqual(second.domain.lastEventSequence, last)
        // The sequence goes on: alice's next sign-in records event last + 1, and it is not her first.
        let again = try second.nativeSignIn(user: "alice")
        XCTAssertEqual(again.status, 200, again.text)
        XCTAssertEqual(second.domain.recordedEvents(after: last).first?.sequence, last + 1)
        let credential = try jsonObject(again.body)
        XCTAssertEqual(credential["email"], .null, "a second authorization tells no email")
        XCTAssertEqual(credential["fullName"], .null)
        // Tokens, codes and keys answer as they did before the stop.
        XCTAssertEqual(try second.refresh(mix.aliceRefresh, clientID: "com.example.app").status, 200)
        assertAppleError(try second.redeem(mix.redeemedCode, clientID: "com.example.app", redirectURI: nil),
                         #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        XCTAssertEqual(try second.refresh(mix.bobRefresh).status, 400, "bob's revoked consent stays revoked")
        XCTAssertEqual(try publishedKeyIDs(second), keyIDs)
        XCTAssertEqual(try second.redeem(mix.pendingCode).status, 200, "a code pending at the stop is still redeemable")
    }

    func testRestart_ForgetsEverything_WhenServedWithoutAStateFile() throws {
        let first = try startFrozenMock()
        let mix = try driveMix(first)
        let before = snapshot(first.domain)
        first.stop()
        let second = try startFrozenMock()
        defer { second.stop() }
        XCTAssertNotEqual(snapshot(second.domain), before)
        XCTAssertEqual(second.domain.lastEventSequence, 0)
        XCTAssertEqual(try second.refresh(mix.aliceRefresh, clientID: "com.example.app").status, 400, "another MAC secret: the token is not this mock's")
        XCTAssertEqual(try second.redeem(mix.pendingCode).status, 400)
    }

    func testStop_ReleasesTheStateFile_ForTheNextMockInTheProcess() async throws {
        // A test suite restarts its in-process mock on the same file: after `stop()` the file
        // must be free, as it is when the CLI's process exits.
        let path = newPath()
        let first = try startFrozenMock { $0.statePath = path }
        XCTAssertEqual(try first.nativeSignIn().status, 200)
        await first.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"), "a stopped mock's file is whole on its own")
        do {
            let second = try startFrozenMock { $0.statePath = path }
            XCTAssertEqual(second.domain.lastEventSequence, 2, "the first mock's consent and code")
            await second.stop()
        } catch {
            XCTFail("a stopped mock still holds its state file: \(error)")
        }
        withExtendedLifetime(first) {}
    }

    func testStart_ReleasesTheStateFile_WhenItFails() throws {
        // A start that throws leaves nothing running: a retry (another port, fixed TLS files, a
        // fixed --mail-forward) opens the same state file at once.
        let occupier = try startMock()
        defer { occupier.stop() }
        let missing = newPath("missing")
        let failures: [(String, (inout AppleIDMockConfiguration) -> Void)] = [
            ("the port is taken", { $0.port = occupier.port }),
            ("the TLS files are missing", { $0.tlsFiles = (certificateChain: missing, privateKey: missing) }),
            ("--mail-forward is malformed", { $0.mailForward = "mail.example.com" }),
        ]
        for (failure, adjust) in failures {
            let path = newPath()
            XCTAssertNotNil(assertThrows(try startMock { configuration in
                configuration.statePath = path
                adjust(&configuration)
            }), failure)
            do {
                let retry = try startMock { $0.statePath = path }
                retry.stop()
            } catch {
                XCTFail("after a failed start (\(failure)), its state file is still held: \(error)")
            }
        }
    }
}

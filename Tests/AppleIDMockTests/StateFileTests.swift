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
    private var madePaths: [String] = []

    override func tearDown() {
        for path in madePaths {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        madePaths = []
        super.tearDown()
    }

    // MARK: - Factories

    /// A fresh path in the temporary directory (nothing there yet), removed in `tearDown`.
    private func newPath(_ name: String = "state") -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
        madePaths.append(path)
        return path
    }

    /// The built-in scenario with the clock frozen at `frozenNow`, as `startFrozenMock` serves it.
    private func frozenScenario() -> Scenario {
        var scenario = Scenario.default
        scenario.clock = .init(start: frozenNow, frozen: true)
        return scenario
    }

    /// The state file at `path` and its WAL copied to a new path: taken while a mock runs, the
    /// bytes a mock killed at that moment leaves behind.
    private func handedOver(_ path: String) throws -> String {
        let copy = newPath("restart")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
        }
        return copy
    }

    /// A state file made by a mock that signed alice in (web code redeemed), then stopped.
    private func madeStateFile() throws -> String {
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        _ = try server.webTokens(user: "alice")
        server.stop()
        return path
    }

    /// The bytes of the file at `path`.
    private func contents(_ path: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The world of `domain` as one comparable value.
    private func snapshot(_ domain: AppleIDDomain) -> World.Snapshot {
        domain.worldSnapshot
    }

    /// The kids `/auth/keys` serves, sorted (the order is shuffled per fetch).
    private func publishedKeyIDs(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        let response = try server.get("/auth/keys")
        XCTAssertEqual(response.status, 200, file: file, line: line)
        let keys = try XCTUnwrap(try jsonObject(response.body)["keys"]?.arrayValue, file: file, line: line)
        return keys.compactMap { $0.objectValue?["kid"]?.stringValue }.sorted()
    }

    /// The `StateFileError` inside `error` (a mock's `AppleIDMockError.state`, or the error itself).
    private func stateFileError(_ error: (any Error)?, file: StaticString = #filePath, line: UInt = #line) -> StateFileError? {
        if let error = error as? StateFileError { return error }
        guard case .state(let inner)? = error as? AppleIDMockError else {
            XCTFail("expected a state file error, got \(String(describing: error))", file: file, line: line)
            return nil
        }
        return inner
    }

    /// Fails unless opening `path` — as a mock serving `scenario` and as `StateFile` — is refused
    /// with `problem` and exactly `description`, leaving the file's bytes as they were.
    private func assertRefused(_ path: String, scenario: Scenario? = nil, _ problem: StateFileError.Problem, _ description: String,
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
    private struct Mix {
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
    private func driveMix(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> Mix {
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
    private func replacing(_ value: JSONValue, at path: [any Sendable], with replacement: JSONValue) -> JSONValue {
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
    private func assertImportRefused(_ archive: JSONValue, _ description: String, file: StaticString = #filePath, line: UInt = #line) {
        let target = newPath("import")
        let error = assertThrows(try StateArchive.importing(Array(JSONWriter.pretty(archive).utf8), into: target), file: file, line: line)
        XCTAssertEqual((error as? StateArchive.Failure)?.description, description, file: file, line: line)
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "a refused import made the file", file: file, line: line)
    }

    /// Records inert `tokens-issued` events in operations of 100, each committed before the
    /// next, until the sequence reaches `sequence` (as many exchanges would, only faster).
    private func recordInertEvents(_ domain: AppleIDDomain, until sequence: UInt64) async throws {
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

    // MARK: - Refusals

    func testStateFile_IsRefusedAsInUse_WhileARunningMockHoldsIt_AndTheFirstGoesOn() throws {
        let path = newPath()
        let first = try startFrozenMock { $0.statePath = path }
        defer { first.stop() }
        XCTAssertEqual(try first.nativeSignIn().status, 200)
        let main = try contents(path)
        let wal = try contents(path + "-wal")
        try assertRefused(path, .inUse, "state file \(path): in use by another running appleid-mock; stop it, or give this one its own file")
        XCTAssertEqual((assertThrows(try StateArchive.export(path: path)) as? StateArchive.Failure)?.description,
                       "state file \(path): in use by another running appleid-mock; stop it, or give this one its own file")
        XCTAssertEqual(try contents(path), main)
        XCTAssertEqual(try contents(path + "-wal"), wal)
        // The first mock still answers, and its answers still wait for (and get) their commits.
        let last = first.domain.lastEventSequence
        XCTAssertEqual(try first.nativeSignIn(user: "bob").status, 200)
        XCTAssertGreaterThan(first.domain.lastEventSequence, last)
        XCTAssertNotEqual(try contents(path + "-wal"), wal, "the first mock committed bob's sign-in")
        // The twin: a file of its own starts a second mock.
        let own = newPath()
        let other = try startFrozenMock { $0.statePath = own }
        other.stop()
    }

    func testStateFile_IsRefusedAsDamaged_WhenItIsNotADatabase() throws {
        let path = newPath()
        var random = SystemRandomNumberGenerator()
        var junk = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &random) }
        junk[0] = UInt8(ascii: "#")
        try Data(junk).write(to: URL(fileURLWithPath: path))
        try assertRefused(path, .damaged("file is not a database"),
                          "state file \(path): damaged or not a state file (file is not a database); it was left untouched")
        // The twin: a path with no file yet is a new state file, which a mock starts on and writes.
        let fresh = newPath()
        let server = try startFrozenMock { $0.statePath = fresh }
        server.stop()
        XCTAssertGreaterThan(try contents(fresh).count, 0)
    }

    func testStateFile_IsRefusedAsEmpty_WhenFoundEmpty_P8() throws {
        // A copy that failed, or a volume restored empty: taken as new, it would drop every user,
        // consent and key without a word.
        let path = newPath()
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data()))
        try assertRefused(path, .empty, "state file \(path): empty (0 bytes), and no mock made it: a copy that failed, or a volume restored empty? "
                          + "It was left untouched; remove it (or name a new file) to start afresh")
        XCTAssertEqual(try contents(path).count, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        // The twin: the file this process makes is empty until its first commit, and is taken as new.
        let made = newPath()
        let file = try StateFile(path: made, scenarioJSON: frozenScenario().prettyJSON)
        XCTAssertNil(file.stored)
        file.close()
        XCTAssertNil(try StateFile(path: made, scenarioJSON: frozenScenario().prettyJSON).stored)
    }

    /// One opener of a state file on its own thread, held at `step` until the test lets it go on.
    private final class HeldOpener: Sendable {
        private let arrived = DispatchSemaphore(value: 0)
        private let proceed = DispatchSemaphore(value: 0)
        private let finished = DispatchSemaphore(value: 0)
        private let outcome = Mutex<Result<StateFile, StateFileError>?>(nil)

        /// Starts opening `path` (a new state for `json`), holding at `step`.
        init(path: String, json: String, step: StateFileLock.Step) {
            DispatchQueue.global().async { [self] in
                let result = Result { () throws(StateFileError) in
                    try StateFile(path: path, scenarioJSON: json) { reached in
                        guard reached == step else { return }
                        arrived.signal()
                        proceed.wait()
                    }
                }
                outcome.withLock { $0 = result }
                finished.signal()
            }
        }

        /// Whether it reached its step (bounded: a failing test must not hang).
        func reachedStep() -> Bool { arrived.wait(timeout: .now() + 30) == .success }

        /// Lets it go on and waits (bounded) for the outcome.
        func finish() -> Result<StateFile, StateFileError>? {
            proceed.signal()
            guard finished.wait(timeout: .now() + 30) == .success else { return nil }
            return outcome.withLock { $0 }
        }
    }

    func testStateFile_OfTwoOpensOnANewPath_BothPastTheCheck_TheFirstToLinkHoldsIt_P11() throws {
        // Probe P11: two starts at the same moment on a new file could both be refused as in use.
        // Both saw no file and both made and locked their own under its temporary name; the test
        // lets one link it, then the other, in each order.
        let json = frozenScenario().prettyJSON
        for firstWins in [true, false] {
            let path = newPath()
            let openers = (0..<2).map { _ in HeldOpener(path: path, json: json, step: .madeTemporary) }
            XCTAssertTrue(openers.allSatisfy { $0.reachedStep() }, "both made a file of their own")
            let (first, second) = firstWins ? (openers[0], openers[1]) : (openers[1], openers[0])
            let winner = try XCTUnwrap(first.finish()).get()
            XCTAssertNil(winner.stored, "a whole new state file")
            let loser = try XCTUnwrap(second.finish())
            guard case .failure(let error) = loser else { return XCTFail("two openers hold \(path)") }
            XCTAssertEqual(error.problem, .inUse)
            winner.close()
            // The loser left no file of its own behind.
            let left = try FileManager.default.contentsOfDirectory(atPath: (path as NSString).deletingLastPathComponent)
                .filter { $0.hasPrefix((path as NSString).lastPathComponent + ".new-") }
            XCTAssertEqual(left, [])
        }
    }

    func testStateFile_OfTwoOpensOfAnExistingFile_BothAboutToLock_OneHoldsIt_AndTheOtherOnceItIsClosed() throws {
        let json = frozenScenario().prettyJSON
        let path = newPath()
        try StateFile(path: path, scenarioJSON: json).close()
        let openers = (0..<2).map { _ in HeldOpener(path: path, json: json, step: .openingExisting) }
        XCTAssertTrue(openers.allSatisfy { $0.reachedStep() }, "both found the file")
        let holder = try XCTUnwrap(openers[0].finish()).get()
        guard case .failure(let error) = try XCTUnwrap(openers[1].finish()) else { return XCTFail("two openers hold \(path)") }
        XCTAssertEqual(error.problem, .inUse)
        // The twin: once the holder lets go, the next opener holds it.
        holder.close()
        let next = HeldOpener(path: path, json: json, step: .openingExisting)
        XCTAssertTrue(next.reachedStep())
        try XCTUnwrap(next.finish()).get().close()
    }

    func testStateFile_OfTwoOpensOnANewPath_OneMadeItBeforeTheOtherLooked_TheSecondIsRefused() throws {
        let json = frozenScenario().prettyJSON
        let path = newPath()
        let first = HeldOpener(path: path, json: json, step: .openingExisting)  // makes it: never at this step
        let holder = try XCTUnwrap(first.finish()).get()
        let second = HeldOpener(path: path, json: json, step: .openingExisting)
        XCTAssertTrue(second.reachedStep(), "the file was there when the second looked")
        guard case .failure(let error) = try XCTUnwrap(second.finish()) else { return XCTFail("two openers hold \(path)") }
        XCTAssertEqual(error.problem, .inUse)
        holder.close()
    }

    func testStateFile_IsRefusedAsNewer_WhenItsSchemaVersionIsAboveThisBuilds() throws {
        let made = try madeStateFile()
        for version: Int64 in [99, StateFile.schemaVersion + 1] {
            let path = try handedOver(made)
            do {
                let database = try SQLiteDatabase(path: path, create: false)
                try database.execute("PRAGMA user_version=\(version)")
            }
            try assertRefused(path, .newer(version), "state file \(path): written by a newer AppleIDMock (schema \(version); this one reads up to \(StateFile.schemaVersion)); "
                              + "it was left untouched")
        }
        // The twin: the file as this build wrote it opens, with what it held.
        let file = try StateFile(path: try handedOver(made), scenarioJSON: frozenScenario().prettyJSON)
        XCTAssertEqual(file.stored?.events.map(\.event.name), ["consent-granted", "code-issued", "code-redeemed", "tokens-issued"])
    }

    func testStateFile_IsRefusedAsForeign_WhenAnotherProgramMadeTheDatabase() throws {
        let path = newPath()
        do {
            let database = try SQLiteDatabase(path: path, create: true)
            try database.execute("CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES('keep me')")
        }
        try assertRefused(path, .foreign, "state file \(path): a SQLite database of another program, not an AppleIDMock state file; it was left untouched")
        // The twin: a SQLite database with nothing in it yet is taken as a new state file.
        let blank = newPath()
        do {
            let database = try SQLiteDatabase(path: blank, create: true)
            try database.execute("PRAGMA user_version=0")
        }
        XCTAssertNil(try StateFile(path: blank, scenarioJSON: frozenScenario().prettyJSON).stored)
    }

    func testStateFile_IsRefusedAsOtherScenario_WhenMadeForAnotherScenario() throws {
        let made = try madeStateFile()
        var other = frozenScenario()
        other.users.append(Scenario.User(id: "zed", email: "zed@example.com", givenName: "Zed", familyName: "Zed"))
        try assertRefused(made, scenario: other, .otherScenario,
                          "state file \(made): holds the state of another scenario; serve the scenario it was made with "
                          + "(`appleid-mock state export` prints it), or give a new file")
        // The twin: the scenario it was made with opens it.
        XCTAssertNotNil(try StateFile(path: made, scenarioJSON: frozenScenario().prettyJSON).stored)
    }

    func testStateFile_IsLeftByteForByte_WhenRefusedWithAWALBesideIt() throws {
        // A mock that was killed leaves its last commits in the WAL: a refused open must not
        // fold them into the main file (nor remove the WAL) either.
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        defer { server.stop() }
        _ = try server.webTokens(user: "alice")
        let killed = try handedOver(path)
        let main = try contents(killed)
        let wal = try contents(killed + "-wal")
        XCTAssertGreaterThan(wal.count, 0)
        var other = frozenScenario()
        other.users.append(Scenario.User(id: "zed", email: "zed@example.com", givenName: "Zed", familyName: "Zed"))
        let error = assertThrows(try StateFile(path: killed, scenarioJSON: other.prettyJSON)) as? StateFileError
        XCTAssertEqual(error?.problem, .otherScenario)
        XCTAssertEqual(try contents(killed), main, "the refused open checkpointed the WAL into the main file")
        XCTAssertEqual(try? contents(killed + "-wal"), wal, "the refused open removed the WAL")
        // The twin: the scenario it was made with opens it, and finds the WAL's commits.
        XCTAssertEqual(try StateFile(path: try handedOver(path), scenarioJSON: frozenScenario().prettyJSON).stored?.events.count, 4)
    }

    func testStateFile_IsRefusedAsNotAFile_WhenThePathIsADirectory() throws {
        let directory = newPath("directory")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        let error = stateFileError(assertThrows(try startFrozenMock { $0.statePath = directory }))
        XCTAssertEqual(error, StateFileError(path: directory, problem: .notAFile))
        XCTAssertEqual(error?.description, "state file \(directory): a directory, not a file")
        // The twin: a file inside it is taken.
        let inside = directory + "/state.sqlite"
        let server = try startFrozenMock { $0.statePath = inside }
        server.stop()
        XCTAssertTrue(FileManager.default.fileExists(atPath: inside))
        try FileManager.default.removeItem(atPath: inside)
    }

    // MARK: - Export and import

    func testStateArchive_ExportThenImport_ServesTheSameWorld() throws {
        let path = newPath()
        let first = try startFrozenMock { $0.statePath = path }
        let mix = try driveMix(first)
        let before = snapshot(first.domain)
        let last = first.domain.lastEventSequence
        first.stop()

        let exported = try StateArchive.export(path: path)
        let archive = try jsonObject(Array(exported.utf8))
        XCTAssertEqual(archive["format"], "appleid-mock-state")
        XCTAssertEqual(archive["version"], .int(StateFile.schemaVersion))
        let events = try XCTUnwrap(archive["events"]?.arrayValue)
        XCTAssertEqual(events.count, Int(last), "below 10,000 events nothing is compacted")
        XCTAssertEqual(events.last?.objectValue?["sequence"], .int(Int64(last)))

        let imported = newPath("imported")
        XCTAssertEqual(try StateArchive.importing(Array(exported.utf8), into: imported), Int(last))
        // Import never writes over a state: the file it made stays as it is.
        let made = try contents(imported)
        XCTAssertEqual((assertThrows(try StateArchive.importing(Array(exported.utf8), into: imported)) as? StateArchive.Failure)?.description,
                       "state file \(imported) exists; remove it or name a new file (import never writes over a state)")
        XCTAssertEqual(try contents(imported), made)

        let served = try startFrozenMock { $0.statePath = imported }
        defer { served.stop() }
        XCTAssertEqual(snapshot(served.domain), before)
        XCTAssertEqual(served.domain.lastEventSequence, last)
        XCTAssertEqual(try served.refresh(mix.aliceRefresh, clientID: "com.example.app").status, 200)
    }

    func testStateArchive_Import_IsRefusedNamingTheJSONPath_WhenTampered() throws {
        let exported = try StateArchive.export(path: try madeStateFile())
        let archive = try JSONParser.parse(exported)
        // The archive as exported imports (the accepted twin of every refusal below).
        XCTAssertEqual(try StateArchive.importing(Array(exported.utf8), into: newPath("import")), 4)
        assertImportRefused(replacing(archive, at: ["events", 2, "sequence"], with: "x"),
                            "events[2].sequence: expected an integer from 1 to 9007199254740991")
        assertImportRefused(replacing(archive, at: ["events", 2, "sequence"], with: 2),
                            "events[2].sequence: expected an integer above the previous event's (2)")
        assertImportRefused(replacing(archive, at: ["genesis", "secret"], with: .string(Base64URL.encode([UInt8](repeating: 7, count: 31)))),
                            "genesis.secret: expected 32 bytes in base64url")
        assertImportRefused(replacing(archive, at: ["events", 1, "event", "type"], with: "code-stolen"),
                            "events[1].event.type: unknown event type \"code-stolen\" (expected one of: \(DomainEvent.names.joined(separator: ", ")))")
        assertImportRefused(replacing(archive, at: ["format"], with: "appleid-mock-state-2"), #"format: expected "appleid-mock-state""#)
    }

    // MARK: - Commit before answer

    func testRequestLog_HoldsTheAnswer_UntilTheEventsItRecordedAreCommitted() async throws {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario = frozenScenario()
        configuration.statePath = newPath()
        configuration.log = { _ in }
        // The domain alone, durable: no writer commits; the test plays the writer.
        let domain = try AppleIDDomain(configuration: configuration, durable: true)
        let barrier = domain.events.barrier
        XCTAssertTrue(barrier.enabled)
        let authorize = try domain.validateAuthorize(["client_id": "com.example.web", "redirect_uri": webRedirect, "response_type": "code",
                                                      "response_mode": "form_post", "scope": "name email", "state": "s", "nonce": "n"])
        let code = try XCTUnwrap(try domain.approve(authorize, AppleIDDomain.Approval(userID: "alice")).parameters.first { $0.0 == "code" }?.1)
        XCTAssertEqual(domain.owner.takeUnwritten().events.map(\.event.name), ["consent-granted", "code-issued"])
        barrier.markCommitted(upTo: barrier.counted)
        let committed = barrier.counted

        let returned = Atomic<Bool>(false)
        let answered = Atomic<Bool>(false)
        let endpoint = TokenEndpoint(domain: domain)
        let handler = RequestLog(level: .error, sink: { _ in }, committing: barrier).apple("/auth/token") { request in
            let response = try endpoint.handle(request)
            returned.store(true, ordering: .releasing)
            return response
        }
        guard case .deferred(let respond) = handler else { return XCTFail("a committing log answers deferred") }
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.web", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        let form = HTTPForm.encode([("client_id", "com.example.web"), ("client_secret", secret), ("code", code),
                                    ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)])
        let request = HTTPRequest(method: .post, target: "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                  body: Array(form.utf8))
        let answer = Task {
            let response = try await respond(request)
            answered.store(true, ordering: .releasing)
            return response
        }
        try await eventually { returned.load(ordering: .acquiring) }
        XCTAssertTrue(returned.load(ordering: .acquiring), "the endpoint answered")
        // The redemption is recorded, handed to the writer, not yet committed: the answer waits.
        XCTAssertEqual(domain.owner.takeUnwritten().events.map(\.event.name), ["code-redeemed", "tokens-issued"])
        XCTAssertEqual(barrier.counted, committed + 2)
        for _ in 0..<20 { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertFalse(answered.load(ordering: .acquiring), "answered before its events were committed")
        // Committed through the first of its two events only: still waiting.
        barrier.markCommitted(upTo: committed + 1)
        for _ in 0..<20 { try await Task.sleep(nanoseconds: 2_000_000) }
        XCTAssertFalse(answered.load(ordering: .acquiring), "answered before its last event was committed")
        barrier.markCommitted(upTo: committed + 2)
        let response = try await answer.value
        XCTAssertEqual(response.status, .ok)
    }

    func testKeysEndpoint_ServesARotatedKey_OnlyOnceItsChangeIsCommitted() async throws {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario = frozenScenario()
        configuration.statePath = newPath()
        configuration.log = { _ in }
        // The domain alone, durable: no writer commits; the test plays the writer.
        let domain = try AppleIDDomain(configuration: configuration, durable: true)
        let barrier = domain.events.barrier
        func served() throws -> [String] {
            let keys = try XCTUnwrap(try jsonObject(domain.jwksBody(shuffled: false))["keys"]?.arrayValue)
            return keys.compactMap { $0.objectValue?["kid"]?.stringValue }
        }
        let before = try served()
        let rotated = try await domain.rotateKeys().keyID
        XCTAssertEqual(domain.signingKeyID, rotated)
        XCTAssertEqual(try served(), before, "a key served before its publication was committed")
        barrier.markCommitted(upTo: barrier.counted - 1)
        XCTAssertEqual(try served(), before, "a key served before the last change of its rotation was committed")
        barrier.markCommitted(upTo: barrier.counted)
        XCTAssertEqual(try served(), before + [rotated])
    }

    func testTokenEndpoint_AnswersOnlyOnceTheRedemptionIsInTheFile() throws {
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        defer { server.stop() }
        func inFile(_ text: String) throws -> Bool {
            let bytes = [UInt8](try contents(path)) + [UInt8]((try? contents(path + "-wal")) ?? Data())
            return bytes.firstRange(of: Array(text.utf8)) != nil
        }
        // The writer usually wins the race anyway (a redemption signs an id_token after it is
        // recorded): thirty redemptions make a missing wait show.
        for _ in 0..<30 {
            let code = try server.webCode()
            let redemption = #"{"type":"code-redeemed","code":"\#(code)""#
            XCTAssertFalse(try inFile(redemption), "not redeemed yet")
            XCTAssertEqual(try server.redeem(code).status, 200)
            XCTAssertTrue(try inFile(redemption), "answered before the redemption was committed")
        }
    }

    // MARK: - Notifications

    func testNotification_PendingAtTheStop_IsDeliveredAfterARestart() throws {
        var scenario = frozenScenario()
        scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
        let path = newPath()
        let first = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationShutdownGrace = 0
        }
        XCTAssertEqual(try first.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        let fired = try first.postJSON("/__mock/events", #"{"type":"email-disabled","user":"bob","client_id":"com.example.app"}"#)
        XCTAssertEqual(fired.status, 202, fired.text)
        let id = UInt64(try XCTUnwrap(try jsonObject(fired.body)["notification"]?.intValue))
        // Port 9 refuses: the first attempt fails and a retry is scheduled.
        eventuallyTrue { first.notifications.records(after: id - 1).first?.attempts.isEmpty == false }
        let refused = try XCTUnwrap(first.notifications.records(after: id - 1).first)
        XCTAssertEqual(refused.attempts.count, 1)
        XCTAssertNil(refused.attempts.first?.status)
        first.stop()

        let receiver = RecordingTransport(status: 200)
        let second = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationTransport = receiver
        }
        defer { second.stop() }
        XCTAssertEqual(second.notifications.records().map(\.id), [id], "the log came back with the undelivered record")
        eventuallyTrue { second.notifications.records(after: id - 1).first?.outcome == .delivered }
        let delivered = try XCTUnwrap(second.notifications.records(after: id - 1).first)
        XCTAssertEqual(delivered.outcome, .delivered)
        XCTAssertEqual(delivered.attempts.map(\.status), [nil, 200])
        XCTAssertEqual(delivered.sequence, refused.sequence)
        XCTAssertEqual(receiver.posts.map(\.url), ["http://127.0.0.1:9/apple"])
        // The twin: a restart without the file has no record to deliver.
        let forgetful = try startMock { configuration in
            configuration.scenario = scenario
            configuration.notificationTransport = RecordingTransport(status: 200)
        }
        defer { forgetful.stop() }
        XCTAssertTrue(forgetful.notifications.records().isEmpty)
    }

    func testAtScale_NotificationLog_KeepsAnUndeliveredRecord_AcrossARestart_WhenTheLogIsFull() async throws {
        // One app group has a receiver that refuses (retried in an hour); the built-in group has
        // no URL, so its records settle at once. A full log steps over the undelivered record at
        // its front and drops the settled ones behind it.
        var scenario = frozenScenario()
        scenario.teams[0].clients.append(Scenario.Client(clientID: "com.example.watched", kind: .appID, notificationURL: "http://127.0.0.1:9/apple"))
        scenario.compatibility.notificationRetryDelays = [3600]
        let path = newPath()
        let first = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationShutdownGrace = 0
        }
        _ = try await first.signInNative(user: "bob", clientID: "com.example.watched", hideEmail: true)
        let pending = try await first.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.watched")
        let pendingID = try XCTUnwrap(pending)
        eventuallyTrue { first.notifications.records().first?.attempts.isEmpty == false }
        _ = try await first.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        for index in 0..<(NotificationDeliverer.logCapacity + 50) {
            try first.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            first.notifications.collect()
        }
        let kept = first.notifications.records()
        XCTAssertEqual(kept.count, NotificationDeliverer.logCapacity)
        XCTAssertEqual(kept.first?.id, pendingID, "the undelivered record stays at the front of the log")
        XCTAssertEqual(kept.first?.outcome, .pending)
        await first.stop()

        let second = try startMock { configuration in
            configuration.scenario = scenario
            configuration.statePath = path
            configuration.notificationTransport = RecordingTransport(status: 200)
        }
        addTeardownBlock { await second.stop() }
        let restored = second.notifications.records()
        XCTAssertEqual(restored.count, kept.count)
        XCTAssertEqual(restored.first?.id, pendingID, "the undelivered record is lost after the restart")
        XCTAssertEqual(restored.first?.outcome, .pending)
        XCTAssertEqual(restored.last?.id, kept.last?.id)
    }

    // MARK: - Compaction

    func testAtScale_StateFile_CompactsOldInertEvents_AndTheRestartedWorldIsTheSame() async throws {
        let path = newPath()
        let server = try startFrozenMock { $0.statePath = path }
        let domain = server.domain
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.web", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        func issue(_ user: String) throws -> String {
            let request = try domain.validateAuthorize(["client_id": "com.example.web", "redirect_uri": webRedirect, "response_type": "code",
                                                        "response_mode": "form_post", "scope": "name email", "state": "s", "nonce": "n"])
            return try XCTUnwrap(try domain.approve(request, AppleIDDomain.Approval(userID: user)).parameters.first { $0.0 == "code" }?.1)
        }
        func redeem(_ code: String) throws -> JSONObject {
            try domain.token(form: ["client_id": "com.example.web", "client_secret": secret, "grant_type": "authorization_code", "code": code,
                              "redirect_uri": webRedirect])
        }
        // Early state that must survive: a code that expires, and one still pending at the end.
        let expired = try issue("alice")
        try await domain.advanceClock(by: 301)
        let pending = try issue("bob")
        // Real code issue/redemption pairs (three events each), then inert tokens-issued events in
        // operations of 100, each operation committed before the next: ~22,000 events in all.
        var redeemed: [String] = []
        for _ in 0..<1_000 {
            let code = try issue("alice")
            _ = try redeem(code)
            redeemed.append(code)
            if redeemed.count % 30 == 0 { try await domain.events.barrier.settle() }
        }
        try await recordInertEvents(domain, until: 22_000)
        let last = domain.lastEventSequence
        let before = snapshot(domain)
        let feed = domain.events.events()
        await server.stop()

        let archive = try jsonObject(Array(try StateArchive.export(path: path).utf8))
        let kept = try XCTUnwrap(archive["events"]?.arrayValue).compactMap { entry -> (sequence: UInt64, type: String, code: String?)? in
            guard let object = entry.objectValue, let sequence = object["sequence"]?.intValue, let event = object["event"]?.objectValue,
                  let type = event["type"]?.stringValue else { return nil }
            return (UInt64(sequence), type, event["code"]?.stringValue)
        }
        XCTAssertLessThan(kept.count, Int(last) - 5_000, "old inert events were dropped")
        XCTAssertEqual(kept.filter { $0.sequence > last - 10_000 }.map(\.sequence), Array((last - 9_999)...last), "the newest 10,000 are kept whole")
        XCTAssertEqual(kept.filter { $0.sequence <= 10_000 && ($0.type == "tokens-issued" || $0.type == "fault-fired") }.count, 0)
        let keptCodes = Set(kept.compactMap(\.code))
        XCTAssertTrue(redeemed.allSatisfy { !keptCodes.contains($0) }, "a redeemed code's issue and redemption both go")
        XCTAssertFalse(keptCodes.contains(expired), "an expired code's issue goes")
        XCTAssertTrue(keptCodes.contains(pending), "a pending code's issue stays")
        XCTAssertEqual(kept.filter { $0.type == "consent-granted" }.count, 2, "consents stay")

        let restarted = try startFrozenMock { $0.statePath = path }
        XCTAssertEqual(snapshot(restarted.domain), before)
        XCTAssertEqual(restarted.domain.lastEventSequence, last)
        let restoredFeed = restarted.domain.events.events()
        XCTAssertEqual(restoredFeed.events.first?.sequence, last - 9_999, "the feed's oldest event")
        XCTAssertEqual(restoredFeed.missed, last - 10_000)
        XCTAssertEqual(restoredFeed.events, feed.events)
        XCTAssertEqual(try restarted.domain.token(form: ["client_id": "com.example.web", "client_secret": secret, "grant_type": "authorization_code",
                                                   "code": pending, "redirect_uri": webRedirect])["token_type"], "Bearer")
        XCTAssertEqual(restarted.domain.recordedEvents(after: last).first?.sequence, last + 1)
        await restarted.stop()
    }

    func testAtScale_StateFile_CompactsOldInertEvents_WhenTheyWereWrittenAcrossRestarts() async throws {
        // A file kept across many short runs (compose keeps it in a named volume) must not grow
        // without bound: 12,000 inert events, 6,000 per run, are more than the newest 10,000.
        let path = newPath()
        for target: UInt64 in [6_000, 12_000] {
            let server = try startFrozenMock { $0.statePath = path }
            try await recordInertEvents(server.domain, until: target)
            await server.stop()
        }
        let archive = try jsonObject(Array(try StateArchive.export(path: path).utf8))
        let sequences = try XCTUnwrap(archive["events"]?.arrayValue).compactMap { $0.objectValue?["sequence"]?.intValue }
        XCTAssertEqual(sequences.last, 12_000)
        XCTAssertEqual(sequences.count, 10_000, "inert events older than the newest 10,000 are still in the file")
    }

    func testRestart_SignsWithTheStoredKeys_WithoutReadingTheKeysDirectory() async throws {
        let path = newPath()
        let first = try startFrozenMock { $0.statePath = path }
        let kids = try publishedKeyIDs(first)
        let signer = first.domain.signingKeyID
        await first.stop()
        // A keys directory that does not exist: read at a first start, it refuses; a restart
        // takes its keys from the state file and never looks.
        let missing = "/nonexistent-\(UUID().uuidString)"
        let again = try startFrozenMock { $0.statePath = path; $0.keysDirectory = missing }
        XCTAssertEqual(try publishedKeyIDs(again), kids)
        XCTAssertEqual(again.domain.signingKeyID, signer)
        await again.stop()
        XCTAssertThrowsError(try startFrozenMock { $0.statePath = newPath(); $0.keysDirectory = missing }) { error in
            guard case AppleIDMockError.keys(.directoryMissing(missing))? = error as? AppleIDMockError else {
                return XCTFail("expected the missing keys directory, got \(error)")
            }
        }
    }

    func testStart_TakesAFileMadeButNeverBegun_AsANewState() async throws {
        // A start that stopped between making the file and writing its beginning.
        let path = newPath()
        try StateFile(path: path, scenarioJSON: Scenario.default.prettyJSON).close()
        let server = try startMock { $0.statePath = path }
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        await server.stop()
        let restarted = try startMock { $0.statePath = path }
        XCTAssertEqual(restarted.domain.lastEventSequence, 0)
        await restarted.stop()
        // Its twin: no beginning but events is a damaged file, refused.
        let damaged = newPath()
        let file = try StateFile(path: damaged, scenarioJSON: Scenario.default.prettyJSON)
        try file.write(StateBatch(events: [RecordedEvent(sequence: 1, at: 0, event: .accountDeleted(userID: "alice"))]))
        file.close()
        XCTAssertThrowsError(try startMock { $0.statePath = damaged }) { error in
            guard case AppleIDMockError.state(let refusal)? = error as? AppleIDMockError else { return XCTFail("\(error)") }
            XCTAssertEqual(refusal.problem, .damaged("no genesis record"))
        }
    }

    /// The key IDs of `/auth/keys` in the order served (under `--seed`, from the seed's stream).
    private func servedKeyOrder(_ server: AppleIDMockServer, fetches: Int) throws -> [[String]] {
        try (0..<fetches).map { _ in
            let keys = try XCTUnwrap(try jsonObject(try server.get("/auth/keys").body)["keys"]?.arrayValue)
            return keys.compactMap { $0.objectValue?["kid"]?.stringValue }
        }
    }

    func testRestart_GoesOnWithTheSeededKeyOrders_WhereTheStopLeftThem() async throws {
        // One seeded mock serving eighteen fetches is the reference.
        let reference = try startFrozenMock { $0.seed = 11 }
        let orders = try servedKeyOrder(reference, fetches: 18)
        await reference.stop()
        XCTAssertNotEqual(Array(orders[0..<6]), Array(orders[6..<12]), "the stream gives other orders as it goes")
        let path = newPath()
        let first = try startFrozenMock { $0.seed = 11; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(first, fetches: 6), Array(orders[0..<6]), "a state file changes nothing in a seeded run")
        await first.stop()
        let second = try startFrozenMock { $0.seed = 11; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(second, fetches: 6), Array(orders[6..<12]), "the orders go on where the stop left them")
        await second.stop()
        // Exported and imported, the place goes with the state.
        let archive = try StateArchive.export(path: path)
        XCTAssertNotNil(try jsonObject(Array(archive.utf8))["jwks_order"]?.objectValue)
        let imported = newPath("imported")
        try StateArchive.importing(Array(archive.utf8), into: imported)
        let third = try startFrozenMock { $0.seed = 11; $0.statePath = imported }
        XCTAssertEqual(try servedKeyOrder(third, fetches: 6), Array(orders[12..<18]))
        await third.stop()
        // The twin, without a state file: a restarted seeded mock begins the orders again.
        let fresh = try startFrozenMock { $0.seed = 11 }
        XCTAssertEqual(try servedKeyOrder(fresh, fetches: 6), Array(orders[0..<6]))
        await fresh.stop()
    }

    func testKill_RepeatsTheSeededKeyOrders_SinceTheLastCommit() async throws {
        let reference = try startFrozenMock { $0.seed = 12 }
        let orders = try servedKeyOrder(reference, fetches: 9)
        await reference.stop()
        let path = newPath()
        let running = try startFrozenMock { $0.seed = 12; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(running, fetches: 3), Array(orders[0..<3]))
        // A sign-in commits, and the key orders' place with it; the three fetches after it write nothing.
        XCTAssertEqual(try running.nativeSignIn().status, 200)
        XCTAssertEqual(try servedKeyOrder(running, fetches: 3), Array(orders[3..<6]))
        let killed = try handedOver(path)
        await running.stop()
        let afterKill = try startFrozenMock { $0.seed = 12; $0.statePath = killed }
        XCTAssertEqual(try servedKeyOrder(afterKill, fetches: 3), Array(orders[3..<6]), "the orders since the last commit come again")
        await afterKill.stop()
        // Its twin: the mock stopped, not killed, committed the place at its stop.
        let afterStop = try startFrozenMock { $0.seed = 12; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(afterStop, fetches: 3), Array(orders[6..<9]))
        await afterStop.stop()
    }

    func testKeyOrderPlace_IsKeptForItsOwnSeedOnly() async throws {
        // An unseeded run stores no place (its orders come from entropy).
        let unseeded = newPath()
        let plain = try startFrozenMock { $0.statePath = unseeded }
        _ = try servedKeyOrder(plain, fetches: 2)
        await plain.stop()
        XCTAssertEqual(try jsonObject(Array(try StateArchive.export(path: unseeded).utf8))["jwks_order"], .null)
        // A file seeded with 11, restarted with 13: seed 13's orders from their start.
        let reference = try startFrozenMock { $0.seed = 13 }
        let orders = try servedKeyOrder(reference, fetches: 4)
        await reference.stop()
        let path = newPath()
        let first = try startFrozenMock { $0.seed = 11; $0.statePath = path }
        _ = try servedKeyOrder(first, fetches: 5)
        await first.stop()
        XCTAssertNotNil(try jsonObject(Array(try StateArchive.export(path: path).utf8))["jwks_order"]?.objectValue, "the twin: seeded, it is stored")
        let reseeded = try startFrozenMock { $0.seed = 13; $0.statePath = path }
        XCTAssertEqual(try servedKeyOrder(reseeded, fetches: 4), orders)
        await reseeded.stop()
    }
}

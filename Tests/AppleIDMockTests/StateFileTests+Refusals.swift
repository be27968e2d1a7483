@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `StateFileTests`: the files a mock must refuse, each left byte for byte as it was, and export and import.
extension StateFileTests {
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
    final class HeldOpener: Sendable {
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
}

import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// `serve --state FILE` and `appleid-mock state` as processes: a seeded mock killed with SIGKILL
/// and restarted on its file draws what one process would have drawn next; bad usage is exit 2
/// naming what is wrong.
final class StateCLITests: XCTestCase {
    private var files: [String] = []

    override func tearDown() {
        for file in files {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        }
    }

    private func temporary(_ name: String) -> String {
        let path = NSTemporaryDirectory() + "state-cli-\(UUID().uuidString)-\(name)"
        files.append(path)
        return path
    }

    /// The built-in scenario on a frozen clock (codes carry their time), seeded.
    private func scenario() throws -> String {
        var scenario = Scenario.default
        scenario.seed = 7
        scenario.clock = .init(start: 1_893_456_000, frozen: true)
        let file = temporary("scenario.json")
        try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// The code of a native sign-in of `user` at `server`.
    private func code(_ server: CLIProcess.Server, user: String) throws -> String {
        let port = try XCTUnwrap(server.port, server.firstLine)
        let answer = try RawHTTPClient(port: port).roundTrip("POST", "/__mock/sign-in", headers: [("Content-Type", "application/json")],
                                                            body: Array(#"{"user":"\#(user)","client_id":"com.example.app"}"#.utf8))
        XCTAssertEqual(answer.status, 200, answer.text)
        return try XCTUnwrap(JSONParser.parse(answer.body).objectValue?["authorizationCode"]?.stringValue, answer.text)
    }

    func testServeState_SeededStreamGoesOnAfterSIGKILL_AsInOneProcess() throws {
        let scenario = try scenario()
        // One process: alice, then bob.
        let whole = try CLIProcess.Server(["serve", "--port", "0", "--scenario", scenario])
        let first = try code(whole, user: "alice")
        let second = try code(whole, user: "bob")
        whole.stop()
        // Killed between the two, restarted on its file: bob's code is the same.
        let state = temporary("state.sqlite")
        let killed = try CLIProcess.Server(["serve", "--port", "0", "--scenario", scenario, "--state", state])
        XCTAssertEqual(try code(killed, user: "alice"), first)
        killed.stop(signal: SIGKILL)
        let restarted = try CLIProcess.Server(["serve", "--port", "0", "--scenario", scenario, "--state", state])
        defer { restarted.stop() }
        XCTAssertEqual(try code(restarted, user: "bob"), second)
        // The twin: without --state a new process starts the stream again and draws alice's code for bob's turn.
        let fresh = try CLIProcess.Server(["serve", "--port", "0", "--scenario", scenario])
        defer { fresh.stop() }
        XCTAssertNotEqual(try code(fresh, user: "bob"), second)
    }

    func testServeState_RefusesASecondMockAndADirectory_WithExitTwoNamingTheFile() throws {
        let state = temporary("held.sqlite")
        let holder = try CLIProcess.Server(["serve", "--port", "0", "--state", state])
        defer { holder.stop() }
        XCTAssertNotNil(holder.port, holder.firstLine)
        let second = try CLIProcess.run(["serve", "--port", "0", "--state", state])
        XCTAssertEqual(second.status, 2)
        XCTAssertTrue(second.stderr.contains("state file \(state): in use by another running appleid-mock"), second.stderr)
        let shown = try CLIProcess.run(["state", "show", "--state", state])
        XCTAssertEqual(shown.status, 2)
        XCTAssertTrue(shown.stderr.contains("in use by another running appleid-mock"), shown.stderr)
        let directory = try CLIProcess.run(["serve", "--port", "0", "--state", NSTemporaryDirectory()])
        XCTAssertEqual(directory.status, 2)
        XCTAssertTrue(directory.stderr.contains("a directory, not a file"), directory.stderr)
    }

    func testStateCommand_RefusesBadUsage_WithExitTwo() throws {
        let missing = temporary("missing.sqlite")
        let cases: [([String], String)] = [
            (["state"], "missing state command (show, export or import)"),
            (["state", "list", "--state", missing], "unknown state command \"list\""),
            (["state", "show"], "--state FILE is required"),
            (["state", "show", "--state", missing], "state file \(missing): no such file"),
            (["state", "import", "--state", missing], "import takes the SAVED file"),
            (["state", "export", "a", "b", "--state", missing], "export takes at most one OUT file"),
            (["serve", "--state", ""], "--state expects a file path"),
        ]
        for (arguments, message) in cases {
            let result = try CLIProcess.run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let help = try CLIProcess.run(["state", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: appleid-mock state show --state FILE"), help.stdout)
    }

    func testStateImport_RefusesAnExistingFileAndBrokenJSON_NamingThePath() throws {
        let state = temporary("made.sqlite")
        let server = try CLIProcess.Server(["serve", "--port", "0", "--state", state])
        _ = try code(server, user: "alice")
        XCTAssertEqual(server.stop().status, 0)
        let export = try CLIProcess.run(["state", "export", "--state", state])
        XCTAssertEqual(export.status, 0, export.stderr)
        let saved = temporary("saved.json")
        try export.stdout.write(toFile: saved, atomically: true, encoding: .utf8)
        // Accepted into a new file…
        let target = temporary("imported.sqlite")
        let imported = try CLIProcess.run(["state", "import", saved, "--state", target])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertEqual(imported.stdout, "made \(target) from \(saved): 2 events\n")
        let shown = try CLIProcess.run(["state", "show", "--state", target])
        XCTAssertTrue(shown.stdout.contains("consents       1 live"), shown.stdout)
        // …never over one.
        let again = try CLIProcess.run(["state", "import", saved, "--state", target])
        XCTAssertEqual(again.status, 2)
        XCTAssertTrue(again.stderr.contains("state file \(target) exists"), again.stderr)
        // A broken field is named by its path, and nothing is made.
        let broken = temporary("broken.json")
        try export.stdout.replacingOccurrences(of: #""sequence": 2,"#, with: #""sequence": "x","#)
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let other = temporary("other.sqlite")
        let refused = try CLIProcess.run(["state", "import", broken, "--state", other])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("events[1].sequence: expected an integer from 1 to 9007199254740991"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: other))
    }

    func testServeState_ASecondStartOnAFileInUse_IsRefusedNamingIt_AndServesOnceTheFirstStops_P11() throws {
        // The interleavings of two starts at the same moment are forced in StateFileTests (the
        // lock's own steps); here, the refusal a second process gives, and its twin.
        let state = temporary("race.sqlite")
        let first = try CLIProcess.Server(["serve", "--port", "0", "--state", state])
        XCTAssertTrue(first.firstLine.hasPrefix("listening on "), first.firstLine)
        let second = try CLIProcess.run(["serve", "--port", "0", "--state", state])
        XCTAssertEqual(second.status, 2)
        XCTAssertEqual(second.stdout, "")
        XCTAssertEqual(second.stderr, "appleid-mock: state file \(state): in use by another running appleid-mock; stop it, or give this one its own file\n")
        XCTAssertEqual(first.stop().status, 0)
        let third = try CLIProcess.Server(["serve", "--port", "0", "--state", state])
        XCTAssertTrue(third.firstLine.hasPrefix("listening on "), third.firstLine)
        XCTAssertEqual(third.stop().status, 0)
    }

    func testServeState_IsRefusedNamingTheFile_WhenTheFileIsEmpty_P8() throws {
        let state = temporary("empty.sqlite")
        XCTAssertTrue(FileManager.default.createFile(atPath: state, contents: Data()))
        let refused = try CLIProcess.run(["serve", "--port", "0", "--state", state])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderr, "appleid-mock: state file \(state): empty (0 bytes), and no mock made it: a copy that failed, or a volume "
                       + "restored empty? It was left untouched; remove it (or name a new file) to start afresh\n")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: state)).count, 0)
        // The twin: once removed, the same path starts afresh.
        try FileManager.default.removeItem(atPath: state)
        let server = try CLIProcess.Server(["serve", "--port", "0", "--state", state])
        XCTAssertTrue(server.firstLine.hasPrefix("listening on "), server.firstLine)
        XCTAssertEqual(server.stop().status, 0)
    }
}

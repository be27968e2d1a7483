import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `appleid-mock events [--follow]` as a process against a live mock: the feed's events one JSON
/// object a line, oldest first; `--follow` prints each new one as it lands and exits 0 on SIGINT,
/// 1 when the mock goes away; bad `--type` and `--after` are exit 2.
final class EventsCLITests: XCTestCase {
    private var server: CLIProcess.Server!
    private var port = 0
    private var url: String { "http://127.0.0.1:\(port)" }

    override func setUpWithError() throws {
        server = try CLIProcess.Server(["--port", "0"])
        port = try XCTUnwrap(server.port, server.firstLine)
    }

    override func tearDown() {
        server?.stop()
    }

    private func signIn(_ user: String) throws {
        let result = try CLIProcess.run(["sign-in", "--user", user, "--client", "com.example.app", "--server", url])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    /// Each printed line parsed as a JSON object.
    private func events(_ stdout: some StringProtocol, file: StaticString = #filePath, line: UInt = #line) throws -> [JSONObject] {
        try stdout.split(separator: "\n").map { text in
            try XCTUnwrap(JSONParser.parse(Array(text.utf8)).objectValue, String(text), file: file, line: line)
        }
    }

    func testEvents_PrintsASignInsConsentThenItsCode_OneObjectALine_AsTheMockSendsThem() throws {
        try signIn("alice")
        let result = try CLIProcess.run(["events", "--server", url])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stderr, "")
        let printed = try events(result.stdout)
        XCTAssertEqual(printed.map { $0["type"] }, ["consent-granted", "code-issued"])
        XCTAssertEqual(printed.map { $0["sequence"] }, [1, 2])
        XCTAssertEqual(printed.map { $0["user"] }, ["alice", "alice"])
        // Byte for byte the feed's own objects.
        let feed = try RawHTTPClient(port: port).roundTrip("GET", "/__mock/events").body
        let objects = try XCTUnwrap(JSONParser.parse(feed).objectValue?["events"]?.arrayValue)
        XCTAssertEqual(result.stdout, objects.map { String(decoding: JSONWriter.sortedCompact($0), as: UTF8.self) + "\n" }.joined())

        // --type and --after narrow it; the twins above print both.
        let codes = try CLIProcess.run(["events", "--server", url, "--type", "code-issued"])
        XCTAssertEqual(try events(codes.stdout).map { $0["type"] }, ["code-issued"])
        let later = try CLIProcess.run(["events", "--server", url, "--after", "2"])
        XCTAssertEqual(later.status, 0, later.stderr)
        XCTAssertEqual(later.stdout, "")
    }

    func testEventsFollow_PrintsEachNewEventAsItLands_AndExitsZeroOnSIGINT() throws {
        try signIn("alice")
        let follower = try CLIProcess.Server(["events", "--follow", "--type", "code-issued", "--server", url], watchdog: 120)
        defer { follower.stop(signal: SIGKILL) }
        XCTAssertEqual(try events(follower.firstLine).first?["user"], "alice")
        try signIn("bob")
        let next = try events(try XCTUnwrap(follower.readLine(), "no line for bob's code"))
        XCTAssertEqual(next.first?["type"], "code-issued")
        XCTAssertEqual(next.first?["user"], "bob")
        let (status, rest, stderr) = follower.stop(signal: SIGINT)
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(rest, "")
        XCTAssertEqual(stderr, "")
    }

    func testEventsFollow_ExitsZero_WhenItsReaderCloses_ThoughNoEventComes() throws {
        try signIn("alice")
        // `events --follow | head -n 1`: head leaves after the first line, and bash waits for
        // the follower too, which would long-poll for ever if it noticed only at its next write.
        let pipeline = Process()
        pipeline.executableURL = URL(fileURLWithPath: "/bin/bash")
        pipeline.arguments = ["-c", #"set -o pipefail; "$0" events --follow --server "$1" | head -n 1"#, CLIProcess.binary, url]
        let out = Pipe()
        let err = Pipe()
        pipeline.standardOutput = out
        pipeline.standardError = err
        try pipeline.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + 120) { [pipeline] in
            if pipeline.isRunning { kill(pipeline.processIdentifier, SIGKILL) }
        }
        let printed = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        pipeline.waitUntilExit()
        XCTAssertEqual(pipeline.terminationStatus, 0, String(decoding: errors, as: UTF8.self))
        XCTAssertEqual(try events(String(decoding: printed, as: UTF8.self)).map { $0["type"] }, ["consent-granted"])
    }

    func testEventsFollow_ExitsOneSayingSo_WhenTheMockGoesAway() throws {
        try signIn("alice")
        let follower = try CLIProcess.Server(["events", "--follow", "--server", url], watchdog: 120)
        defer { follower.stop(signal: SIGKILL) }
        XCTAssertFalse(follower.firstLine.isEmpty)
        kill(server.process.processIdentifier, SIGKILL)
        let (status, _, stderr) = follower.waitForExit()
        XCTAssertEqual(status, 1)
        XCTAssertTrue(stderr.hasPrefix("appleid-mock: lost the mock while following its events: cannot reach \(url): "), stderr)
    }

    func testEvents_RejectsAnUnknownTypeAndABadAfter_WithExitTwoNamingTheFlag() throws {
        let type = try CLIProcess.run(["events", "--server", url, "--type", "code-issued,code-stolen"])
        XCTAssertEqual(type.status, 2)
        XCTAssertEqual(type.stderr.split(separator: "\n").first.map(String.init),
                       "appleid-mock: --type expects event types separated by commas, among \(DomainEvent.names.joined(separator: ", ")); got \"code-issued,code-stolen\"")
        for bad in ["", "code-issued,", "CODE-ISSUED"] {
            XCTAssertEqual(try CLIProcess.run(["events", "--server", url, "--type", bad]).status, 2, bad)
        }
        for bad in ["-1", "soon", "1.5", "18446744073709551616"] {
            let after = try CLIProcess.run(["events", "--server", url, "--after", bad])
            XCTAssertEqual(after.status, 2, bad)
            XCTAssertEqual(after.stderr.split(separator: "\n").first.map(String.init),
                           "appleid-mock: --after expects an integer from 0 to 18446744073709551615, got \"\(bad)\"")
        }
        XCTAssertEqual(try CLIProcess.run(["events", "--server", url, "extra"]).status, 2)
        let help = try CLIProcess.run(["events", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: appleid-mock events [--follow]"), help.stdout)
        XCTAssertTrue(try CLIProcess.run(["--help"]).stdout.contains("appleid-mock events [--follow]"))
    }

    func testEvents_SendsTheControlToken_AndIsRefusedWithoutIt() throws {
        let token = "events-control-token-0123456789"
        let guarded = try CLIProcess.Server(["--port", "0", "--control-token", token])
        defer { guarded.stop() }
        let address = "http://127.0.0.1:\(try XCTUnwrap(guarded.port, guarded.firstLine))"
        let accepted = try CLIProcess.run(["events", "--server", address], environment: ["APPLEID_MOCK_CONTROL_TOKEN": token])
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
        let refused = try CLIProcess.run(["events", "--server", address], environment: ["APPLEID_MOCK_CONTROL_TOKEN": ""])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.hasPrefix("appleid-mock: the mock answered 401: "), refused.stderr)
    }

    /// A feed that reports events it no longer keeps (a stand-in for the mock, which needs 10,000
    /// events to say so): the events are printed and stderr says how many were missed.
    func testEvents_SaysOnStderrHowManyWereMissed() throws {
        var router = Router()
        router.add(.get, "/__mock/events") { _ in
            HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"],
                         body: Array(#"{"events":[{"at":0,"sequence":13,"type":"reset"}],"last":13,"missed":12}"#.utf8))
        }
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.eventLoopCount = 1
        let feed = try HTTPServer.start(configuration: configuration, routes: router.build())
        defer { feed.stop() }
        let result = try CLIProcess.run(["events", "--server", "http://127.0.0.1:\(feed.port)"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, #"{"at":0,"sequence":13,"type":"reset"}"# + "\n")
        XCTAssertEqual(result.stderr, "appleid-mock: 12 events were missed: the mock no longer keeps them (it keeps its newest only)\n")
    }
}

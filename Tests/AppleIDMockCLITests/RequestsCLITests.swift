import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `appleid-mock requests [--follow | --count]` and `serve --journal off` as processes against a
/// live mock: the journal's entries one JSON object a line, filters narrowing them, `--count`,
/// `--follow` printing each new request; bad filters are exit 2, a journal that is off exit 1.
final class RequestsCLITests: XCTestCase {
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

    private func lines(_ stdout: some StringProtocol, file: StaticString = #filePath, line: UInt = #line) throws -> [JSONObject] {
        try stdout.split(separator: "\n").map { text in
            try XCTUnwrap(JSONParser.parse(Array(text.utf8)).objectValue, String(text), file: file, line: line)
        }
    }

    func testRequests_PrintsTheJournalOneObjectALine_AndFiltersAndCountsIt() throws {
        let client = try RawHTTPClient(port: port)
        XCTAssertEqual(try client.roundTrip("GET", "/auth/keys").status, 200)
        XCTAssertEqual(try client.roundTrip("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                            body: Array("client_id=com.example.web&grant_type=refresh_token".utf8)).status, 400)
        let all = try CLIProcess.run(["requests", "--server", url])
        XCTAssertEqual(all.status, 0, all.stderr)
        XCTAssertEqual(try lines(all.stdout).map { $0["path"] }, ["/auth/keys", "/auth/token"])
        // Byte for byte the journal's own objects.
        let journal = try RawHTTPClient(port: port).roundTrip("GET", "/__mock/requests").body
        let objects = try XCTUnwrap(JSONParser.parse(journal).objectValue?["requests"]?.arrayValue)
        XCTAssertEqual(all.stdout, objects.map { String(decoding: JSONWriter.sortedCompact($0), as: UTF8.self) + "\n" }.joined())

        let refused = try CLIProcess.run(["requests", "--server", url, "--status", "4xx", "--grant-type", "refresh_token"])
        XCTAssertEqual(try lines(refused.stdout).map { $0["error"] }, ["invalid_client"])
        XCTAssertEqual(try CLIProcess.run(["requests", "--server", url, "--path", "/auth/revoke"]).stdout, "")
        let count = try CLIProcess.run(["requests", "--count", "--server", url, "--path", "/auth/token", "--client-id", "com.example.web"])
        XCTAssertEqual(count.status, 0, count.stderr)
        XCTAssertEqual(count.stdout, "1\n")
        XCTAssertEqual(try CLIProcess.run(["requests", "--count", "--server", url, "--method", "DELETE"]).stdout, "0\n")
    }

    func testRequestsFollow_PrintsEachNewRequestAsItLands_AndExitsZeroOnSIGINT() throws {
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys").status, 200)
        let follower = try CLIProcess.Server(["requests", "--follow", "--path", "/auth/keys", "--server", url], watchdog: 120)
        defer { follower.stop(signal: SIGKILL) }
        XCTAssertEqual(try lines(follower.firstLine).first?["id"], 1)
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("GET", "/.well-known/openid-configuration").status, 200)
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys").status, 200)
        let next = try lines(try XCTUnwrap(follower.readLine(), "no line for the second /auth/keys"))
        XCTAssertEqual(next.first?["id"], 3)
        let (status, rest, stderr) = follower.stop(signal: SIGINT)
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(rest, "")
    }

    func testRequests_RejectsBadFilters_WithExitTwoNamingTheFlag() throws {
        let cases: [(String, String, String)] = [
            ("--status", "abc", "--status expects a status code from 100 to 599, or a class such as 4xx, got \"abc\""),
            ("--method", "post", "--method expects a method in capitals (GET, POST …), got \"post\""),
            ("--path", "auth/token", "--path expects a path starting with /, got \"auth/token\""),
            ("--control", "yes", "--control expects true or false, got \"yes\""),
            ("--after", "-1", "--after expects an integer from 0 to 18446744073709551615, got \"-1\""),
        ]
        for (flag, value, message) in cases {
            let result = try CLIProcess.run(["requests", "--server", url, flag, value])
            XCTAssertEqual(result.status, 2, flag)
            XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init), "appleid-mock: " + message)
        }
        XCTAssertEqual(try CLIProcess.run(["requests", "--server", url, "--status", "400", "--control", "false"]).status, 0, "the twins pass")
        XCTAssertEqual(try CLIProcess.run(["requests", "--follow", "--count", "--server", url]).status, 2)
        let help = try CLIProcess.run(["requests", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: appleid-mock requests [--follow | --count]"), help.stdout)
        XCTAssertTrue(try CLIProcess.run(["--help"]).stdout.contains("appleid-mock requests [--follow|--count]"))
    }

    func testServeJournalOff_TurnsTheJournalOff_AndABadValueIsExitTwo() throws {
        let quiet = try CLIProcess.Server(["--port", "0", "--journal", "off"])
        defer { quiet.stop() }
        let address = "http://127.0.0.1:\(try XCTUnwrap(quiet.port, quiet.firstLine))"
        let off = try CLIProcess.run(["requests", "--server", address])
        XCTAssertEqual(off.status, 1)
        XCTAssertTrue(off.stderr.contains("409"), off.stderr)
        XCTAssertTrue(off.stderr.contains("the request journal is off (serve --journal off)"), off.stderr)
        let on = try CLIProcess.Server(["--port", "0"], environment: ["APPLEID_MOCK_JOURNAL": "on"])
        defer { on.stop() }
        XCTAssertEqual(try CLIProcess.run(["requests", "--server", "http://127.0.0.1:\(try XCTUnwrap(on.port, on.firstLine))"]).status, 0)
        let bad = try CLIProcess.run(["serve", "--port", "0", "--journal", "maybe"])
        XCTAssertEqual(bad.status, 2)
        XCTAssertEqual(bad.stderr.split(separator: "\n").first.map(String.init), "appleid-mock: --journal expects on or off, got \"maybe\"")
    }
}

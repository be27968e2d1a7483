import Foundation
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// `serve --log-level` and the reason lines on stderr (issue 18 point 7), with the real binary.
final class LogLevelCLITests: XCTestCase {
    /// A client_credentials request for `clientID` with a secret `client-secret` minted for `secretClient`.
    private func credentials(port: Int, clientID: String, secretClient: String) throws -> RawHTTPResponse {
        let minted = try CLIProcess.run(["client-secret", "--client", secretClient])
        XCTAssertEqual(minted.status, 0, minted.stderr)
        let secret = minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let body = HTTPForm.encode([("client_id", clientID), ("client_secret", secret), ("grant_type", "client_credentials"),
                                    ("scope", "user.migration")])
        return try RawHTTPClient(port: port).roundTrip("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                       body: Array(body.utf8))
    }

    func testServe_WritesTheRefusalReasonOnStderr_AndNothingForTheAcceptedTwin() throws {
        let server = try CLIProcess.Server(["--port", "0"])
        let port = try XCTUnwrap(server.port, server.firstLine)
        let refused = try credentials(port: port, clientID: "com.example.app", secretClient: "com.example.web")
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.text, #"{"error":"invalid_client"}"#)
        XCTAssertEqual(try credentials(port: port, clientID: "com.example.web", secretClient: "com.example.web").status, 200)
        let (status, _, stderr) = server.stop()
        XCTAssertEqual(status, 0)
        XCTAssertEqual(stderr, "appleid-mock: refused POST /auth/token: invalid_client — client_secret sub is com.example.web but client_id is com.example.app\n")
    }

    func testServe_LogsAnsweredRequests_AtDebugLevel() throws {
        let server = try CLIProcess.Server(["--port", "0", "--log-level", "debug"])
        let port = try XCTUnwrap(server.port, server.firstLine)
        XCTAssertEqual(try credentials(port: port, clientID: "com.example.web", secretClient: "com.example.web").status, 200)
        let (_, _, stderr) = server.stop()
        XCTAssertEqual(stderr, "appleid-mock: answered POST /auth/token: 200\n")
    }

    func testServe_LogsNoRefusal_AtWarnLevelFromTheEnvironment() throws {
        let server = try CLIProcess.Server(["--port", "0"], environment: ["APPLEID_MOCK_LOG_LEVEL": "warn"])
        let port = try XCTUnwrap(server.port, server.firstLine)
        XCTAssertEqual(try credentials(port: port, clientID: "com.example.app", secretClient: "com.example.web").text, #"{"error":"invalid_client"}"#)
        let (_, _, stderr) = server.stop()
        XCTAssertEqual(stderr, "")
    }

    func testServe_RejectsABadLogLevelWithExitTwo_NamingTheFlagAndTheLevels() throws {
        for (arguments, environment) in [(["--log-level", "loud"], [:]), ([], ["APPLEID_MOCK_LOG_LEVEL": "loud"])] {
            let result = try CLIProcess.run(arguments + ["--port", "0"], environment: environment)
            XCTAssertEqual(result.status, 2)
            XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init),
                           "appleid-mock: --log-level expects one of error, warn, info, debug, got \"loud\"")
            XCTAssertEqual(result.stdout, "")
        }
    }

    func testServeHelp_DescribesLogLevel() throws {
        let help = try CLIProcess.run(["serve", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("--log-level LEVEL"), help.stdout)
        XCTAssertTrue(help.stdout.contains("APPLEID_MOCK_LOG_LEVEL"), help.stdout)
    }
}

/// A stderr nobody reads must not stall the server (review of the reason lines): lines are
/// written by a writer thread, never by the threads that serve requests.
final class UnreadStderrCLITests: XCTestCase {
    func testServe_KeepsAnswering_WhenItsStderrIsAFullPipeNobodyReads() throws {
        // CLIProcess.Server reads stdout's first line; its stderr pipe is read only at stop().
        let server = try CLIProcess.Server(["--port", "0"])
        let port = try XCTUnwrap(server.port, server.firstLine)
        let client = try RawHTTPClient(port: port, timeout: 10)
        let form = [("Content-Type", "application/x-www-form-urlencoded")]
        // About 80 bytes of reason line each: far past a pipe's 64 KiB.
        for index in 0..<3_000 {
            let refused = try client.roundTrip("POST", "/auth/token", headers: form, body: Array("client_id=com.example.app".utf8))
            XCTAssertEqual(refused.status, 400, "request \(index)")
            if refused.status != 400 { break }
        }
        XCTAssertEqual(try client.roundTrip("GET", "/__mock/health").status, 200)
        let stopped = server.stop()
        XCTAssertEqual(stopped.status, 0)
        XCTAssertTrue(stopped.stderr.hasPrefix("appleid-mock: refused POST /auth/token: invalid_client — client_secret missing\n"), String(stopped.stderr.prefix(200)))
    }
}

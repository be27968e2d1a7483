import Foundation
import XCTest

/// `serve --control-token` and the control commands' `--control-token`, as processes.
final class ControlTokenCLITests: XCTestCase {
    private static let token = "cli-control-token-0123456789"

    func testControlCommands_SendTheToken_AndAreRefusedWithoutIt() throws {
        let server = try CLIProcess.Server(["--port", "0", "--control-token", Self.token])
        defer { server.stop() }
        let url = "http://127.0.0.1:\(try XCTUnwrap(server.port, server.firstLine))"

        let accepted = try CLIProcess.run(["clock", "--server", url, "--control-token", Self.token])
        XCTAssertEqual(accepted.status, 0, accepted.stderr)
        let fromEnvironment = try CLIProcess.run(["keys", "--server", url], environment: ["APPLEID_MOCK_CONTROL_TOKEN": Self.token])
        XCTAssertEqual(fromEnvironment.status, 0, fromEnvironment.stderr)

        let refused = try CLIProcess.run(["clock", "--server", url], environment: ["APPLEID_MOCK_CONTROL_TOKEN": ""])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "appleid-mock: the mock answered 401: "
                       + #"{"error":"the control API needs Authorization: Bearer <the --control-token the mock was started with>","field":"Authorization"}"#
                       + "\n")
        let wrong = try CLIProcess.run(["reset", "--server", url, "--control-token", "not-the-token-0123456789"])
        XCTAssertEqual(wrong.status, 1)
        // The container health check carries no secret.
        XCTAssertEqual(try CLIProcess.run(["health", "--server", url], environment: ["APPLEID_MOCK_CONTROL_TOKEN": ""]).status, 0)
    }

    func testControlToken_BadValuesExitTwoNamingTheFlag() throws {
        for bad in ["short", "has space in it 0123456789", "ünïcödé-0123456789", String(repeating: "a", count: 513)] {
            let serve = try CLIProcess.run(["serve", "--port", "0", "--control-token", bad])
            XCTAssertEqual(serve.status, 2, bad)
            XCTAssertTrue(serve.stderr.hasPrefix("appleid-mock: --control-token expects 16 to 512 characters from A-Z a-z 0-9 - . _ ~ + / =, got "),
                          serve.stderr)
            let clock = try CLIProcess.run(["clock", "--server", "http://127.0.0.1:1", "--control-token", bad])
            XCTAssertEqual(clock.status, 2, bad)
        }
    }

    func testServe_WarnsBeyondLoopbackWithoutAToken_AndNotWithOne() throws {
        let open = try CLIProcess.Server(["--host", "0.0.0.0", "--port", "0"])
        let openStderr = open.stop().stderr
        XCTAssertTrue(openStderr.contains("listening on 0.0.0.0") && openStderr.contains(", with no --control-token: "), openStderr)
        let guarded = try CLIProcess.Server(["--host", "0.0.0.0", "--port", "0", "--control-token", Self.token])
        let guardedStderr = guarded.stop().stderr
        XCTAssertFalse(guardedStderr.contains("with no --control-token"), guardedStderr)
    }
}

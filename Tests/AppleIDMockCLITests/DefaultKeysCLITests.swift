import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// The committed test keys work from any working directory (newcomer P5, probe N9), and a port
/// in use is named.
final class DefaultKeysCLITests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cli-elsewhere-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func kids(_ port: Int) throws -> [String] {
        let keys = try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys")
        XCTAssertEqual(keys.status, 200)
        return try JWKSet(json: JSONParser.parse(keys.body)).keys.map(\.kid).sorted()
    }

    private func tokenError(_ port: Int, secret: String) throws -> String {
        let form = "grant_type=authorization_code&code=c0000000000000000000000000000000.0.nope.nope&client_id=com.example.web&client_secret=\(secret)"
        let answer = try RawHTTPClient(port: port).roundTrip("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                             body: Array(form.utf8))
        XCTAssertEqual(answer.status, 400, answer.text)
        return try JSONParser.parse(answer.body).objectValue?["error"]?.stringValue ?? answer.text
    }

    func testClientSecret_FromAnotherDirectory_MintsASecretTheMockAccepts() throws {
        let minted = try CLIProcess.run(["client-secret"], directory: directory)
        XCTAssertEqual(minted.status, 0, minted.stderr)
        XCTAssertEqual(minted.stderr, "")
        let server = try CLIProcess.Server(["--port", "0"], directory: directory)
        let port = try XCTUnwrap(server.port, server.firstLine)
        defer { server.stop() }
        // The client authenticated: only the (made-up) code is refused.
        XCTAssertEqual(try tokenError(port, secret: minted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "invalid_grant")
        // The twin: a secret signed with another key for the same kid is not.
        XCTAssertEqual(try CLIProcess.run(["keys", "generate", "--out", directory + "/fresh"]).status, 0)
        let otherKey = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: directory + "/fresh").first { $0.hasSuffix(".p8") })
        let forged = try CLIProcess.run(["client-secret", "--key", directory + "/fresh/" + otherKey], directory: directory)
        XCTAssertEqual(forged.status, 0, forged.stderr)
        XCTAssertEqual(try tokenError(port, secret: forged.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), "invalid_client")
    }

    func testServe_FromAnotherDirectory_ServesTheThreeCommittedKids_AndSaysSo() throws {
        let server = try CLIProcess.Server(["serve", "--port", "0"], directory: directory)
        let port = try XCTUnwrap(server.port, server.firstLine)
        XCTAssertEqual(try kids(port), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        let stopped = server.stop()
        XCTAssertEqual(stopped.status, 0)
        XCTAssertEqual(stopped.stderr,
                       "appleid-mock: no Keys/signing in the working directory; serving the built-in copies of its test keys (W2ek7HdPaL, Ymq4vB9xTz, r8TcNf3QsJ)\n")
        // The twin: --keys DIR given explicitly is read, not replaced by the built-in keys.
        XCTAssertEqual(try CLIProcess.run(["keys", "generate", "--out", directory + "/own", "--count", "1"]).status, 0)
        let own = try FileManager.default.contentsOfDirectory(atPath: directory + "/own/signing").filter { $0.hasSuffix(".pem") }.map { String($0.dropLast(4)) }
        XCTAssertEqual(own.count, 1)
        let explicit = try CLIProcess.Server(["serve", "--port", "0", "--keys", directory + "/own/signing"], directory: directory)
        let explicitKids = try kids(try XCTUnwrap(explicit.port, explicit.firstLine))
        XCTAssertTrue(explicitKids.contains(own[0]), "\(explicitKids)")
        XCTAssertFalse(explicitKids.contains("W2ek7HdPaL"), "\(explicitKids)")
        explicit.stop()
    }

    func testScenarioPrint_ThenServeIt_FromAnotherDirectory_Works_N9() throws {
        let printed = try CLIProcess.run(["scenario", "print"], directory: directory)
        XCTAssertEqual(printed.status, 0)
        XCTAssertTrue(printed.stdout.contains(#""directory": "Keys/signing""#), printed.stdout)
        try printed.stdout.write(toFile: directory + "/x.json", atomically: true, encoding: .utf8)
        let check = try CLIProcess.run(["scenario", "check", "x.json"], directory: directory)
        XCTAssertEqual(check.status, 0, check.stderr)
        let server = try CLIProcess.Server(["serve", "--port", "0", "--scenario", "x.json"], directory: directory)
        XCTAssertEqual(try kids(try XCTUnwrap(server.port, server.firstLine)), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(server.stop().status, 0)
        // The twin: a directory the scenario names that is not there and not the default fails (F9).
        try printed.stdout.replacingOccurrences(of: #""Keys/signing""#, with: #""Keys/signing-typo""#)
            .write(toFile: directory + "/typo.json", atomically: true, encoding: .utf8)
        let typo = try CLIProcess.run(["serve", "--port", "0", "--scenario", "typo.json"], directory: directory)
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.stderr.contains(#"signing_keys.directory: expected an existing directory of <kid>.pem files, found "Keys/signing-typo""#), typo.stderr)
    }

    func testServe_OnAPortInUse_ExitsOneNamingTheAddress() throws {
        let first = try CLIProcess.Server(["serve", "--port", "0"])
        let port = try XCTUnwrap(first.port, first.firstLine)
        defer { first.stop() }
        let second = try CLIProcess.run(["serve", "--port", "\(port)"])
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(second.stdout, "")
        XCTAssertEqual(second.stderr, "appleid-mock: cannot listen on 127.0.0.1:\(port): Address already in use (errno 98)"
                       + " — another process is using the port; pick another with --port\n")
        // The twin: the first is still serving.
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys").status, 200)
    }
}

import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// `serve --seed N`, `APPLEID_MOCK_SEED` and a scenario's `seed`, as processes: the same seed
/// draws the same code in two processes, the flag wins over the scenario, and anything but an
/// integer from 0 to 2^64 - 1 is exit 2 naming `--seed`.
final class SeedCLITests: XCTestCase {
    private var files: [String] = []

    override func tearDown() {
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }

    /// A scenario file: the built-in one with `seed`, on a frozen clock (codes carry their time).
    private func scenario(seed: UInt64?) throws -> String {
        var scenario = Scenario.default
        scenario.seed = seed
        scenario.clock = .init(start: 1_893_456_000, frozen: true)
        let file = NSTemporaryDirectory() + "seed-\(UUID().uuidString).json"
        try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
        files.append(file)
        return file
    }

    /// The authorization code of alice's first native sign-in at a mock started with `arguments`
    /// and a frozen clock, the scenario's seed `scenarioSeed`.
    private func firstCode(_ arguments: [String], scenarioSeed: UInt64? = nil, environment: [String: String] = [:]) throws -> String {
        let file = try scenario(seed: scenarioSeed)
        let server = try CLIProcess.Server(["serve", "--port", "0", "--scenario", file] + arguments, environment: environment)
        defer { server.stop() }
        let port = try XCTUnwrap(server.port, server.firstLine)
        let answer = try RawHTTPClient(port: port).roundTrip("POST", "/__mock/sign-in", headers: [("Content-Type", "application/json")],
                                                            body: Array(#"{"user":"alice","client_id":"com.example.app"}"#.utf8))
        XCTAssertEqual(answer.status, 200, answer.text)
        return try XCTUnwrap(JSONParser.parse(answer.body).objectValue?["authorizationCode"]?.stringValue, answer.text)
    }

    func testServeSeed_DrawsTheSameCodeInTwoProcesses_AndAnotherWithoutIt() throws {
        let seeded = try firstCode(["--seed", "7"])
        XCTAssertEqual(try firstCode(["--seed", "7"]), seeded)
        XCTAssertEqual(try firstCode([], environment: ["APPLEID_MOCK_SEED": "7"]), seeded)
        XCTAssertEqual(try firstCode(["--seed", "18446744073709551615"]), try firstCode(["--seed", "18446744073709551615"]))
        // Twins: another seed, and none (system randomness), draw other codes.
        XCTAssertNotEqual(try firstCode(["--seed", "8"]), seeded)
        XCTAssertNotEqual(try firstCode([]), seeded)
    }

    func testServeSeed_TheScenariosSeedApplies_AndTheFlagWinsOverIt() throws {
        let seven = try firstCode(["--seed", "7"])
        let eight = try firstCode(["--seed", "8"])
        XCTAssertEqual(try firstCode([], scenarioSeed: 7), seven)
        XCTAssertEqual(try firstCode(["--seed", "8"], scenarioSeed: 7), eight)
        XCTAssertEqual(try firstCode([], scenarioSeed: 7, environment: ["APPLEID_MOCK_SEED": "8"]), eight, "the variable stands for the flag")
        let file = try scenario(seed: 7)
        let check = try CLIProcess.run(["scenario", "check", file])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(check.stdout, "\(file): ok\n")
    }

    func testServeSeed_RejectsAnythingButAnUnsignedInteger_WithExitTwoNamingTheFlag() throws {
        for bad in ["-1", "abc", "1.5", "", "+7", " 7", "0x10", "18446744073709551616"] {
            let result = try CLIProcess.run(["serve", "--port", "0", "--seed", bad])
            XCTAssertEqual(result.status, 2, bad)
            XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init),
                           "appleid-mock: --seed expects an integer from 0 to 18446744073709551615, got \"\(bad)\"", bad)
            XCTAssertEqual(result.stdout, "", bad)
        }
        let variable = try CLIProcess.run(["serve", "--port", "0"], environment: ["APPLEID_MOCK_SEED": "seven"])
        XCTAssertEqual(variable.status, 2)
        XCTAssertTrue(variable.stderr.hasPrefix("appleid-mock: --seed expects an integer"), variable.stderr)
    }

    func testScenarioCheck_RefusesABadSeedNamingItsPath() throws {
        let file = try scenario(seed: nil)
        let printed = try String(contentsOfFile: file, encoding: .utf8)
        XCTAssertTrue(printed.contains(#""seed": null"#), printed)
        try printed.replacingOccurrences(of: #""seed": null"#, with: #""seed": -1"#).write(toFile: file, atomically: true, encoding: .utf8)
        let refused = try CLIProcess.run(["scenario", "check", file])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderr, "appleid-mock: \(file):\nseed: expected an integer from 0 to 9223372036854775807, found -1\n")
        let serve = try CLIProcess.run(["serve", "--port", "0", "--scenario", file])
        XCTAssertEqual(serve.status, 2)
        XCTAssertEqual(serve.stderr, "appleid-mock: scenario \(file):\nseed: expected an integer from 0 to 9223372036854775807, found -1\n")
    }
}

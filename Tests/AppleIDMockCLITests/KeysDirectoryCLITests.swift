import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// A keys directory says what it holds (probe finding N8): one without `<kid>.pem` files is exit 2
/// naming it, and a number of files other than `signing_keys.count` is served by a rule stated on
/// stderr, never silently.
final class KeysDirectoryCLITests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cli-keysdir-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func kids(_ port: Int) throws -> [String] {
        let keys = try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys")
        return try JWKSet(json: JSONParser.parse(keys.body)).keys.map(\.kid).sorted()
    }

    /// A directory holding the given committed signing keys.
    private func keys(_ name: String, _ kids: [String]) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        for kid in kids {
            try FileManager.default.copyItem(atPath: CLIProcess.root + "/Keys/signing/\(kid).pem", toPath: path + "/\(kid).pem")
        }
        return path
    }

    func testServe_ExitsTwo_WhenTheKeysDirectoryHasNoKeyFiles_NamingItAndItsSigningFolder() throws {
        let parent = CLIProcess.root + "/Keys"
        let result = try CLIProcess.run(["serve", "--port", "0", "--keys", parent])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderr,
                       "appleid-mock: signing keys: keys directory \(parent) has no <kid>.pem files (its signing/ folder has: pass \(parent)/signing)\n")
        let empty = try keys("empty", [])
        let bare = try CLIProcess.run(["serve", "--port", "0", "--keys", empty])
        XCTAssertEqual(bare.status, 2)
        XCTAssertEqual(bare.stderr, "appleid-mock: signing keys: keys directory \(empty) has no <kid>.pem files\n")
        // The twin: the folder that holds them serves them, and says nothing.
        let server = try CLIProcess.Server(["--port", "0", "--keys", parent + "/signing"])
        XCTAssertEqual(try kids(try XCTUnwrap(server.port, server.firstLine)), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(server.stop().stderr, "")
    }

    func testScenarioCheck_RefusesADirectoryWithoutKeyFiles_NamingThePath() throws {
        let empty = try keys("empty", [])
        for (directory, status) in [(empty, Int32(2)), (CLIProcess.root + "/Keys/signing", 0)] {
            let file = self.directory + "/scenario.json"
            let printed = try CLIProcess.run(["scenario", "print"])
            let text = printed.stdout.replacingOccurrences(of: #""directory": "Keys/signing""#, with: #""directory": "\#(directory)""#)
            XCTAssertNotEqual(text, printed.stdout)
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let checked = try CLIProcess.run(["scenario", "check", file])
            XCTAssertEqual(checked.status, status, checked.stderr)
            if status == 2 {
                XCTAssertTrue(checked.stderr.contains("signing_keys.directory: keys directory \(empty) has no <kid>.pem files"), checked.stderr)
            }
        }
    }

    func testServe_StatesHowItServesAKeysDirectoryWithTooFewOrTooManyFiles() throws {
        let one = try keys("one", ["W2ek7HdPaL"])
        let few = try CLIProcess.Server(["--port", "0", "--keys", one])
        let served = try kids(try XCTUnwrap(few.port, few.firstLine))
        XCTAssertEqual(served.count, 3)
        XCTAssertTrue(served.contains("W2ek7HdPaL"))
        let generated = served.filter { $0 != "W2ek7HdPaL" }
        let fewStderr = few.stop().stderr
        XCTAssertTrue(fewStderr.hasPrefix("appleid-mock: \(one) has 1 key file but signing_keys.count is 3: serving them and 2 fresh in-memory keys ("),
                      fewStderr)
        XCTAssertTrue(fewStderr.hasSuffix("), new at every start\n"), fewStderr)
        for kid in generated { XCTAssertTrue(fewStderr.contains(kid), fewStderr) }

        XCTAssertEqual(try CLIProcess.run(["keys", "generate", "--out", directory + "/four", "--count", "4"]).status, 0)
        let four = directory + "/four/signing"
        let names = try FileManager.default.contentsOfDirectory(atPath: four).filter { $0.hasSuffix(".pem") }.sorted().map { String($0.dropLast(4)) }
        XCTAssertEqual(names.count, 4)
        let many = try CLIProcess.Server(["--port", "0", "--keys", four])
        XCTAssertEqual(try kids(try XCTUnwrap(many.port, many.firstLine)), Array(names.prefix(3)).sorted())
        XCTAssertEqual(many.stop().stderr,
                       "appleid-mock: \(four) has 4 key files but signing_keys.count is 3: serving the first 3 by name and ignoring \(names[3])\n")
    }
}

import Foundation
import XCTest

/// `appleid-mock tls`: help, and `generate --keep` (what docker-compose.yml's one-shot `tls`
/// service runs, possibly many times against the same volume).
final class TLSCommandTests: XCTestCase {
    private var directory = ""

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "tls-\(UUID().uuidString)"
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func contents(_ name: String) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
    }

    func testTLSHelp_PrintsUsageAndExitsZero() throws {
        for arguments in [["tls", "--help"], ["tls", "-h"], ["tls", "help"], ["tls", "generate", "--help"]] {
            let result = try CLIProcess.run(arguments)
            XCTAssertEqual(result.status, 0, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stdout.hasPrefix("usage: appleid-mock tls generate --out DIR"), "\(arguments): \(result.stdout)")
            XCTAssertEqual(result.stderr, "", "\(arguments)")
        }
        // The twin: an unknown tls command is still bad input.
        let unknown = try CLIProcess.run(["tls", "--helpful"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertEqual(unknown.stderr.split(separator: "\n").first.map(String.init), "appleid-mock: unknown tls command \"--helpful\"")
    }

    func testTLSGenerate_CertificateNamesBothAppleHostsAndLoopback_AndRefusesABadName() throws {
        let result = try CLIProcess.run(["tls", "generate", "--out", directory, "--name", "shop.test"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasSuffix("names: appleid.apple.com, appleid.cdn-apple.com, localhost, 127.0.0.1, ::1, shop.test\n"), result.stdout)
        // The leaf's subjectAltName entries as DER (RFC 5280 §4.2.1.6): dNSName [2], iPAddress [7].
        let leaf = try XCTUnwrap(Self.firstCertificateDER(try String(contentsOfFile: directory + "/cert.pem", encoding: .utf8)))
        func dns(_ name: String) -> [UInt8] { [0x82, UInt8(name.utf8.count)] + Array(name.utf8) }
        for name in ["appleid.apple.com", "appleid.cdn-apple.com", "localhost", "shop.test"] {
            XCTAssertTrue(Self.contains(leaf, dns(name)), name)
        }
        XCTAssertTrue(Self.contains(leaf, [0x87, 4, 127, 0, 0, 1]), "127.0.0.1")
        XCTAssertTrue(Self.contains(leaf, [0x87, 16] + Array(repeating: 0, count: 15) + [1]), "::1")
        // The twins: a name not asked for is not in it, and one that is no name is refused, writing nothing.
        XCTAssertFalse(Self.contains(leaf, dns("appleid.cdn-apple.net")))
        let other = directory + "/bad"
        let refused = try CLIProcess.run(["tls", "generate", "--out", other, "--name", "bad name"])
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stderr.split(separator: "\n").first.map(String.init),
                       "appleid-mock: --name: \"bad name\" is neither an IP address nor a DNS name")
        XCTAssertFalse(FileManager.default.fileExists(atPath: other), "nothing written")
    }

    /// The DER bytes of the first PEM certificate in `pem`.
    private static func firstCertificateDER(_ pem: String) -> [UInt8]? {
        guard let begin = pem.range(of: "-----BEGIN CERTIFICATE-----"), let end = pem.range(of: "-----END CERTIFICATE-----") else { return nil }
        let body = pem[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
        return Data(base64Encoded: String(body)).map { Array($0) }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    func testTLSGenerateKeep_WritesAllThree_WhenNoneExists() throws {
        let result = try CLIProcess.run(["tls", "generate", "--out", directory, "--keep"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.hasPrefix("wrote \(directory)/ca.pem\nwrote \(directory)/cert.pem\nwrote \(directory)/key.pem\n"), result.stdout)
        for name in ["ca.pem", "cert.pem", "key.pem"] { XCTAssertFalse(try contents(name).isEmpty, name) }
    }

    func testTLSGenerateKeep_KeepsTheFiles_WhenAllThreeExist() throws {
        XCTAssertEqual(try CLIProcess.run(["tls", "generate", "--out", directory]).status, 0)
        let before = try ["ca.pem", "cert.pem", "key.pem"].map(contents)
        let result = try CLIProcess.run(["tls", "generate", "--out", directory, "--keep"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, "kept \(directory)/ca.pem, \(directory)/cert.pem, \(directory)/key.pem\n")
        XCTAssertEqual(try ["ca.pem", "cert.pem", "key.pem"].map(contents), before, "the same CA, certificate and key")
        // The twin: without --keep the same run refuses, and --force makes a new CA.
        let refused = try CLIProcess.run(["tls", "generate", "--out", directory])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr, "appleid-mock: \(directory)/ca.pem exists; refusing to overwrite (--force to replace)\n")
        XCTAssertEqual(try CLIProcess.run(["tls", "generate", "--out", directory, "--force"]).status, 0)
        XCTAssertNotEqual(try contents("ca.pem"), before[0])
    }

    func testTLSGenerateKeep_FailsNamingTheFiles_WhenOnlySomeExist() throws {
        XCTAssertEqual(try CLIProcess.run(["tls", "generate", "--out", directory]).status, 0)
        try FileManager.default.removeItem(atPath: directory + "/key.pem")
        let kept = try contents("ca.pem")
        let result = try CLIProcess.run(["tls", "generate", "--out", directory, "--keep"])
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stdout, "")
        XCTAssertEqual(result.stderr, "appleid-mock: --keep: \(directory)/ca.pem, \(directory)/cert.pem exist but \(directory)/key.pem does not; "
            + "remove the rest or use --force to make all three again\n")
        XCTAssertEqual(try contents("ca.pem"), kept, "nothing written")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory + "/key.pem"))
    }

    func testTLSGenerate_RejectsKeepWithForce() throws {
        let result = try CLIProcess.run(["tls", "generate", "--out", directory, "--keep", "--force"])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init), "appleid-mock: --force and --keep exclude each other")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory), "nothing written")
        // The twin: --keep takes no value.
        let valued = try CLIProcess.run(["tls", "generate", "--out", directory, "--keep=yes"])
        XCTAssertEqual(valued.status, 2)
        XCTAssertEqual(valued.stderr.split(separator: "\n").first.map(String.init), "appleid-mock: --keep takes no value")
    }
}

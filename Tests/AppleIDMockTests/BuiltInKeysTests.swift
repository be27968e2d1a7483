import AppleIDMock
import Foundation
import JOSE
import XCTest

/// The binary's copies of the committed test keys cannot drift from `Keys/`.
final class BuiltInKeysTests: XCTestCase {
    func testBuiltInSigningKeys_EqualTheFilesInKeysSigning_KidForKidAndByteForByte() throws {
        let directory = repositoryRoot + "/Keys/signing"
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".pem") }.sorted()
        XCTAssertEqual(BuiltInKeys.signing.map { $0.keyID + ".pem" }, files, "a key added to or removed from Keys/signing must be built in too")
        for key in BuiltInKeys.signing {
            XCTAssertEqual(key.pem, try String(contentsOfFile: directory + "/\(key.keyID).pem", encoding: .utf8), key.keyID)
        }
        // The twin: a copy that differs by one character is told apart.
        let first = try XCTUnwrap(BuiltInKeys.signing.first)
        XCTAssertNotEqual(first.pem.replacingOccurrences(of: "MII", with: "MIJ"), try String(contentsOfFile: directory + "/\(first.keyID).pem", encoding: .utf8))
    }

    func testBuiltInDeveloperKey_EqualsKeysAuthKeyFile_AndIsTheDefaultScenarioKey() throws {
        let file = try String(contentsOfFile: repositoryRoot + "/Keys/AuthKey_\(BuiltInKeys.developerKeyID).p8", encoding: .utf8)
        XCTAssertEqual(BuiltInKeys.developerKeyPEM, file)
        XCTAssertEqual(try P256PrivateKey(pem: BuiltInKeys.developerKeyPEM).publicKey.pem, Scenario.defaultDeveloperPublicKey)
        XCTAssertEqual(BuiltInKeys.developerKey("MOCKKEY001"), file)
        XCTAssertNil(BuiltInKeys.developerKey("OTHERKEY01"), "only the committed key is built in")
    }

    func testKeyRingBuiltIn_ServesTheCommittedKids_ThenGeneratesTheRest() throws {
        let ring = try KeyRing.builtIn(count: 4, activeKeyID: "Ymq4vB9xTz")
        XCTAssertEqual(ring.keys.prefix(3).map(\.keyID), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(ring.keys.count, 4)
        XCTAssertEqual(ring.activeKey.keyID, "Ymq4vB9xTz")
        XCTAssertThrowsError(try KeyRing.builtIn(count: 3, activeKeyID: "NoSuchKid1"))
    }
}

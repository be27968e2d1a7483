import JOSE
import XCTest

/// RSA keys: generation, PEM, modulus/exponent import, RS256 signatures.
final class RSAKeyTests: XCTestCase {
    private let message = Array("header.payload".utf8)

    /// Generate makes a 2048-bit key that signs and verifies.
    func testGenerate_Makes2048BitKey_ThatSignsAndVerifies() throws {
        let key = SharedKeys.rsa
        XCTAssertEqual(key.bits, 2048)
        let signature = try key.signRS256(message)
        XCTAssertEqual(signature.count, 256)
        XCTAssertTrue(key.publicKey.verifyRS256(signature: signature, message: message))
    }

    /// Verify fails when message signature or key is tampered.
    func testVerify_Fails_WhenMessageSignatureOrKeyIsTampered() throws {
        let key = SharedKeys.rsa
        let signature = try key.signRS256(message)
        XCTAssertTrue(key.publicKey.verifyRS256(signature: signature, message: message))
        XCTAssertFalse(key.publicKey.verifyRS256(signature: signature, message: flippingBit(message, at: 3)))
        XCTAssertFalse(key.publicKey.verifyRS256(signature: flippingBit(signature, at: 100), message: message))
        XCTAssertFalse(key.publicKey.verifyRS256(signature: Array(signature.dropLast()), message: message))
        XCTAssertFalse(key.publicKey.verifyRS256(signature: [], message: message))
        XCTAssertFalse(SharedKeys.otherRSA.publicKey.verifyRS256(signature: signature, message: message))
    }

    /// Sign is deterministic.
    func testSign_IsDeterministic() throws {
        // RSASSA-PKCS1-v1_5 has no randomness: the same key and message give the same bytes.
        XCTAssertEqual(try SharedKeys.rsa.signRS256(message), try SharedKeys.rsa.signRS256(message))
        XCTAssertNotEqual(try SharedKeys.rsa.signRS256(message), try SharedKeys.otherRSA.signRS256(message))
    }

    /// Generate throws when bits are below 2048.
    func testGenerate_Throws_WhenBitsBelow2048() {
        assertThrows(try RSAPrivateKey.generate(bits: 1024)) { error in
            assertJOSEError(error) { if case .invalidKey = $0 { return true } else { return false } }
        }
    }

    /// PKCS8 PEM round trips.
    func testPKCS8PEM_RoundTrips() throws {
        let key = SharedKeys.rsa
        XCTAssertTrue(try key.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        XCTAssertTrue(try key.pkcs8PEM.hasSuffix("-----END PRIVATE KEY-----\n"))
        let reloaded = try RSAPrivateKey(pem: key.pkcs8PEM)
        XCTAssertEqual(reloaded.publicKey.modulus, key.publicKey.modulus)
        XCTAssertEqual(try reloaded.signRS256(message), try key.signRS256(message))
        XCTAssertEqual(try reloaded.pkcs8PEM, try key.pkcs8PEM)
    }

    /// Public PEM round trips.
    func testPublicPEM_RoundTrips() throws {
        let publicKey = SharedKeys.rsa.publicKey
        XCTAssertTrue(try publicKey.pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let reloaded = try RSAPublicKey(pem: publicKey.pem)
        XCTAssertEqual(reloaded.modulus, publicKey.modulus)
        XCTAssertEqual(reloaded.exponent, [0x01, 0x00, 0x01])
        XCTAssertTrue(reloaded.verifyRS256(signature: try SharedKeys.rsa.signRS256(message), message: message))
    }

    /// Init PEM reads PKCS8 and PKCS1 fixtures.
    func testInitPEM_ReadsPKCS8AndPKCS1Fixtures() throws {
        let expected = try RSAPublicKey(pem: Fixture.text("rsa_public.pem"))
        let pkcs8 = try RSAPrivateKey(pem: Fixture.text("rsa_private_pkcs8.pem"))
        let pkcs1 = try RSAPrivateKey(pem: Fixture.text("rsa_private_pkcs1.pem"))
        XCTAssertEqual(pkcs8.publicKey.modulus, expected.modulus)
        XCTAssertEqual(pkcs1.publicKey.modulus, expected.modulus)
        XCTAssertEqual(try pkcs8.publicKey.pem, try Fixture.text("rsa_public.pem"))
        XCTAssertEqual(expected.modulus.count, 256)
        XCTAssertNotEqual(expected.modulus.first, 0)
    }

    /// Init PEM throws when key is not RSA.
    func testInitPEM_Throws_WhenKeyIsNotRSA() throws {
        let ecPrivate = try Fixture.text("p256_private_pkcs8.p8")
        let ecPublic = try Fixture.text("p256_public.pem")
        XCTAssertNoThrow(try RSAPrivateKey(pem: Fixture.text("rsa_private_pkcs8.pem")))
        assertThrows(try RSAPrivateKey(pem: ecPrivate)) { error in
            XCTAssertEqual(error as? JOSEError, .invalidKey("not an RSA private key"))
        }
        XCTAssertNoThrow(try RSAPublicKey(pem: Fixture.text("rsa_public.pem")))
        assertThrows(try RSAPublicKey(pem: ecPublic)) { error in
            XCTAssertEqual(error as? JOSEError, .invalidKey("not an RSA public key"))
        }
    }

    /// Init PEM throws when PEM is garbage or wrong kind.
    func testInitPEM_Throws_WhenPEMIsGarbageOrWrongKind() throws {
        let pem = try Fixture.text("rsa_private_pkcs8.pem")
        var lines = pem.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines[3] = String(lines[3].reversed())
        assertThrows(try RSAPrivateKey(pem: lines.joined(separator: "\n")))
        assertThrows(try RSAPrivateKey(pem: "not a key"))
        assertThrows(try RSAPrivateKey(pem: ""))
        assertThrows(try RSAPrivateKey(pem: Fixture.text("rsa_public.pem")))
        assertThrows(try RSAPublicKey(pem: pem))
        assertThrows(try RSAPrivateKey(pem: String(repeating: "A", count: 70_000))) { error in
            XCTAssertEqual(error as? JOSEError, .invalidKey("PEM larger than 64 KiB"))
        }
        assertThrows(try RSAPrivateKey(pem: "not a key")) { error in
            assertJOSEError(error) { if case let .invalidKey(detail) = $0 { return detail.hasPrefix("not a readable PEM private key") } else { return false } }
        }
    }

    /// Init PEM throws when PEM is encrypted.
    func testInitPEM_Throws_WhenPEMIsEncrypted() throws {
        XCTAssertNoThrow(try RSAPrivateKey(pem: Fixture.text("rsa_private_pkcs8.pem")))
        assertThrows(try RSAPrivateKey(pem: Fixture.text("rsa_private_encrypted.pem")))
    }

    /// Init(modulus:exponent:) matches PEM key.
    func testInitModulusExponent_MatchesPEMKey() throws {
        let publicKey = SharedKeys.rsa.publicKey
        let rebuilt = try RSAPublicKey(modulus: publicKey.modulus, exponent: publicKey.exponent)
        XCTAssertEqual(try rebuilt.pem, try publicKey.pem)
        let signature = try SharedKeys.rsa.signRS256(message)
        XCTAssertTrue(rebuilt.verifyRS256(signature: signature, message: message))
        let other = try RSAPublicKey(modulus: SharedKeys.otherRSA.publicKey.modulus, exponent: publicKey.exponent)
        XCTAssertFalse(other.verifyRS256(signature: signature, message: message))
    }

    /// Init(modulus:exponent:) ignores leading zeros.
    func testInitModulusExponent_IgnoresLeadingZeros() throws {
        let publicKey = SharedKeys.rsa.publicKey
        let rebuilt = try RSAPublicKey(modulus: [0] + publicKey.modulus, exponent: [0, 0] + publicKey.exponent)
        XCTAssertEqual(rebuilt.modulus, publicKey.modulus)
        XCTAssertEqual(rebuilt.exponent, publicKey.exponent)
    }

    /// Init(modulus:exponent:) throws when parameters are implausible.
    func testInitModulusExponent_Throws_WhenParametersAreImplausible() {
        let modulus = SharedKeys.rsa.publicKey.modulus
        XCTAssertNoThrow(try RSAPublicKey(modulus: modulus, exponent: [1, 0, 1]))
        assertThrows(try RSAPublicKey(modulus: modulus, exponent: [1]))
        assertThrows(try RSAPublicKey(modulus: modulus, exponent: [2]))
        assertThrows(try RSAPublicKey(modulus: modulus, exponent: []))
        assertThrows(try RSAPublicKey(modulus: modulus, exponent: [UInt8](repeating: 1, count: 9)))
        assertThrows(try RSAPublicKey(modulus: flippingBit(modulus, at: modulus.count - 1), exponent: [1, 0, 1]))
        assertThrows(try RSAPublicKey(modulus: [], exponent: [1, 0, 1]))
        assertThrows(try RSAPublicKey(modulus: Array(modulus.prefix(128)) + [1], exponent: [1, 0, 1])) { error in
            assertJOSEError(error) { if case .invalidKey = $0 { return true } else { return false } }
        }
    }

    /// Keys are usable concurrently.
    func testKeys_AreUsableConcurrently() async throws {
        let key = SharedKeys.rsa
        let message = self.message
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<8 {
                group.addTask {
                    let input = message + [UInt8(index)]
                    let signature = try key.signRS256(input)
                    return key.publicKey.verifyRS256(signature: signature, message: input)
                        && !key.publicKey.verifyRS256(signature: signature, message: message)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(results, Array(repeating: true, count: 8))
    }
}

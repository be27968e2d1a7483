import JOSE
import XCTest

/// P-256 keys: generation, PEM, raw ES256 signatures.
final class P256KeyTests: XCTestCase {
    private let message = Array("header.payload".utf8)

    /// Generate makes a key that signs raw 64-byte signatures.
    func testGenerate_MakesKey_ThatSignsRaw64ByteSignatures() throws {
        let key = SharedKeys.p256
        let signature = try key.signES256(message)
        XCTAssertEqual(signature.count, 64)
        XCTAssertTrue(key.publicKey.verifyES256(signature: signature, message: message))
    }

    /// Sign is randomized and each signature verifies.
    func testSign_IsRandomized_AndEachSignatureVerifies() throws {
        let first = try SharedKeys.p256.signES256(message)
        let second = try SharedKeys.p256.signES256(message)
        XCTAssertNotEqual(first, second)
        XCTAssertTrue(SharedKeys.p256.publicKey.verifyES256(signature: second, message: message))
    }

    /// Verify fails when message signature or key is tampered.
    func testVerify_Fails_WhenMessageSignatureOrKeyIsTampered() throws {
        let key = SharedKeys.p256
        let signature = try key.signES256(message)
        XCTAssertTrue(key.publicKey.verifyES256(signature: signature, message: message))
        XCTAssertFalse(key.publicKey.verifyES256(signature: signature, message: flippingBit(message, at: 0)))
        XCTAssertFalse(key.publicKey.verifyES256(signature: flippingBit(signature, at: 5), message: message))
        XCTAssertFalse(key.publicKey.verifyES256(signature: flippingBit(signature, at: 40), message: message))
        XCTAssertFalse(SharedKeys.otherP256.publicKey.verifyES256(signature: signature, message: message))
    }

    /// Verify fails when the signature is not 64 bytes.
    func testVerify_Fails_WhenSignatureIsNot64Bytes() throws {
        let signature = try SharedKeys.p256.signES256(message)
        XCTAssertTrue(SharedKeys.p256.publicKey.verifyES256(signature: signature, message: message))
        XCTAssertFalse(SharedKeys.p256.publicKey.verifyES256(signature: Array(signature.dropLast()), message: message))
        XCTAssertFalse(SharedKeys.p256.publicKey.verifyES256(signature: signature + [0], message: message))
        XCTAssertFalse(SharedKeys.p256.publicKey.verifyES256(signature: [0] + signature, message: message))
        XCTAssertFalse(SharedKeys.p256.publicKey.verifyES256(signature: [], message: message))
    }

    /// Verify fails when scalars are zero or out of range.
    func testVerify_Fails_WhenScalarsAreZeroOrOutOfRange() {
        let publicKey = SharedKeys.p256.publicKey
        XCTAssertFalse(publicKey.verifyES256(signature: [UInt8](repeating: 0, count: 64), message: message))
        XCTAssertFalse(publicKey.verifyES256(signature: [UInt8](repeating: 0xFF, count: 64), message: message))
    }

    /// Verify fails when signature is DER.
    func testVerify_Fails_WhenSignatureIsDER() throws {
        // Re-encode our raw signature as DER ECDSA-Sig-Value: same r and s, wrong format.
        let raw = try SharedKeys.p256.signES256(message)
        XCTAssertTrue(SharedKeys.p256.publicKey.verifyES256(signature: raw, message: message))
        XCTAssertFalse(SharedKeys.p256.publicKey.verifyES256(signature: derEncoded(raw), message: message))
    }

    /// PKCS8 PEM round trips.
    func testPKCS8PEM_RoundTrips() throws {
        let key = SharedKeys.p256
        XCTAssertTrue(try key.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reloaded = try P256PrivateKey(pem: key.pkcs8PEM)
        XCTAssertEqual(try reloaded.publicKey.pem, try key.publicKey.pem)
        XCTAssertTrue(key.publicKey.verifyES256(signature: try reloaded.signES256(message), message: message))
    }

    /// Public PEM round trips.
    func testPublicPEM_RoundTrips() throws {
        let publicKey = SharedKeys.p256.publicKey
        XCTAssertTrue(try publicKey.pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let reloaded = try P256PublicKey(pem: publicKey.pem)
        XCTAssertEqual(try reloaded.pem, try publicKey.pem)
        XCTAssertTrue(reloaded.verifyES256(signature: try SharedKeys.p256.signES256(message), message: message))
        XCTAssertFalse(reloaded.verifyES256(signature: try SharedKeys.otherP256.signES256(message), message: message))
    }

    /// Init PEM reads apple style P8 and SEC1 fixtures.
    func testInitPEM_ReadsAppleStyleP8AndSEC1Fixtures() throws {
        let expected = try Fixture.text("p256_public.pem")
        XCTAssertEqual(try P256PrivateKey(pem: Fixture.text("p256_private_pkcs8.p8")).publicKey.pem, expected)
        XCTAssertEqual(try P256PrivateKey(pem: Fixture.text("p256_private_sec1.pem")).publicKey.pem, expected)
        XCTAssertEqual(try P256PublicKey(pem: expected).pem, expected)
    }

    /// Init PEM throws when curve is not P256.
    func testInitPEM_Throws_WhenCurveIsNotP256() throws {
        assertThrows(try P256PrivateKey(pem: Fixture.text("p384_private_pkcs8.pem"))) { error in
            XCTAssertEqual(error as? JOSEError, .invalidKey("EC key on secp384r1, not P-256"))
        }
        assertThrows(try P256PublicKey(pem: Fixture.text("p384_public.pem")))
    }

    /// Init PEM throws when key is RSA.
    func testInitPEM_Throws_WhenKeyIsRSA() throws {
        assertThrows(try P256PrivateKey(pem: Fixture.text("rsa_private_pkcs8.pem"))) { error in
            XCTAssertEqual(error as? JOSEError, .invalidKey("not an EC key"))
        }
        assertThrows(try P256PrivateKey(pem: Fixture.text("rsa_private_pkcs1.pem")))
        assertThrows(try P256PublicKey(pem: Fixture.text("rsa_public.pem")))
    }

    /// Init PEM throws when PEM is garbage.
    func testInitPEM_Throws_WhenPEMIsGarbage() throws {
        let pem = try Fixture.text("p256_private_pkcs8.p8")
        XCTAssertNoThrow(try P256PrivateKey(pem: pem))
        assertThrows(try P256PrivateKey(pem: pem.replacingOccurrences(of: "M", with: "N")))
        assertThrows(try P256PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n"))
        assertThrows(try P256PublicKey(pem: pem))
    }

    /// A minimal DER encoder for `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }`.
    private func derEncoded(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var body = Array(bytes.drop { $0 == 0 })
            if body.isEmpty || body[0] & 0x80 != 0 { body.insert(0, at: 0) }
            return [0x02, UInt8(body.count)] + body
        }
        let content = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(content.count)] + content
    }
}

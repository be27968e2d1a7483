import JOSE
import XCTest

/// Seeded RSA keys: the same seed gives the same key, another seed another key, and the key is a
/// working RS256 key.
final class RSAPrivateKeySeededTests: XCTestCase {
    private static let seed = Array("AppleIDMock seeded key tests".utf8)
    /// Made once per test process: seeded generation is about as slow as OpenSSL's own.
    private static let key: RSAPrivateKey = {
        do { return try RSAPrivateKey.generate(bits: 2048, seed: seed) } catch { fatalError("seeded keygen failed: \(error)") }
    }()

    // Pinned once from this implementation: SHA-256 of the 2048-bit modulus for `seed`. The
    // same value in every process and on every machine is what `--seed` runs rely on; a change
    // to SeededRandom or to the prime search changes it. Cross-checked by redoing the whole
    // construction in Python (hashlib/hmac stream, the same draws and checks, Miller-Rabin in
    // place of BN_check_prime, d from lcm(p - 1, q - 1)), which gave the same hash:
    // Fixtures/check_seeded_vectors.py.
    private let pinnedModulusSHA256 = "fcd251ede347ce25bf9e2a962292197b95b9464586938c75f6a1c45d58e4a646"

    /// The same seed gives the same key, down to the PEM and the JWK modulus, and it matches the
    /// value pinned from another process.
    func testGenerateSeeded_GivesSameKey_ForSameSeed() throws {
        let again = try RSAPrivateKey.generate(bits: 2048, seed: Self.seed)
        XCTAssertEqual(again.publicKey.modulus, Self.key.publicKey.modulus)
        XCTAssertEqual(try again.pkcs8PEM, try Self.key.pkcs8PEM)
        XCTAssertEqual(
            JWK(kid: "seeded", publicKey: again.publicKey).n,
            JWK(kid: "seeded", publicKey: Self.key.publicKey).n
        )
        XCTAssertEqual(hex(SHA256.hash(Self.key.publicKey.modulus)), pinnedModulusSHA256)
    }

    /// Another seed, even one bit away, gives another key.
    func testGenerateSeeded_GivesDifferentKey_ForDifferentSeed() throws {
        let other = try RSAPrivateKey.generate(bits: 2048, seed: flippingBit(Self.seed, at: 0))
        XCTAssertNotEqual(other.publicKey.modulus, Self.key.publicKey.modulus)
        XCTAssertNotEqual(hex(SHA256.hash(other.publicKey.modulus)), pinnedModulusSHA256)
        XCTAssertNotEqual(try other.pkcs8PEM, try Self.key.pkcs8PEM)
    }

    /// The key has exactly the size asked for and exponent 65537.
    func testGenerateSeeded_HasExactSize_AndExponentF4() throws {
        XCTAssertEqual(Self.key.bits, 2048)
        XCTAssertEqual(Self.key.publicKey.modulus.count, 256)
        XCTAssertGreaterThanOrEqual(Self.key.publicKey.modulus[0], 0x80)
        XCTAssertEqual(Self.key.publicKey.exponent, [0x01, 0x00, 0x01])
        let larger = try RSAPrivateKey.generate(bits: 2304, seed: Self.seed)
        XCTAssertEqual(larger.bits, 2304)
        XCTAssertEqual(larger.publicKey.modulus.count, 288)
        XCTAssertNotEqual(Array(larger.publicKey.modulus.prefix(256)), Self.key.publicKey.modulus)
    }

    /// The seeded key signs RS256 tokens its public key verifies; a tampered signature, a
    /// tampered payload or another seed's key is refused.
    func testGenerateSeeded_SignsRS256_ThatVerifies() throws {
        let payload = Array(#"{"sub":"seeded"}"#.utf8)
        let token = try CompactJWS.signRS256(payload: payload, kid: "seeded", key: Self.key)
        let parsed = try CompactJWS.parse(token.compact)
        XCTAssertTrue(parsed.verifyRS256(with: Self.key.publicKey))

        let tamperedSignature = CompactJWS(header: parsed.header, payload: payload, signature: flippingBit(parsed.signature, at: 17))
        XCTAssertFalse(tamperedSignature.verifyRS256(with: Self.key.publicKey))
        let tamperedPayload = CompactJWS(header: parsed.header, payload: flippingBit(payload, at: 3), signature: parsed.signature)
        XCTAssertFalse(tamperedPayload.verifyRS256(with: Self.key.publicKey))
        let other = try RSAPrivateKey.generate(bits: 2048, seed: Self.seed + [0])
        XCTAssertFalse(parsed.verifyRS256(with: other.publicKey))
    }

    /// The PEM reloads through the ordinary reader (and its pair check) as the same key.
    func testGenerateSeeded_PEMReloads_AsSameKey() throws {
        let reloaded = try RSAPrivateKey(pem: Self.key.pkcs8PEM)
        XCTAssertEqual(reloaded.publicKey.modulus, Self.key.publicKey.modulus)
        let message = Array("header.payload".utf8)
        XCTAssertEqual(try reloaded.signRS256(message), try Self.key.signRS256(message))
    }

    /// Sizes outside 2048...4096, or not a multiple of 256, are refused with a reason naming the size.
    func testGenerateSeeded_Throws_WhenBitsInvalid() {
        for bits in [-2048, 0, 1024, 1792, 2047, 2049, 2100, 3000, 4352, 8192] {
            assertThrows(try RSAPrivateKey.generate(bits: bits, seed: Self.seed), "bits \(bits)") { error in
                XCTAssertEqual(error as? JOSEError, .invalidKey("seeded RSA key size \(bits) is not 2048...4096 in steps of 256"))
            }
        }
    }
}

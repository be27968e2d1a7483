import JOSE
import XCTest

/// Tokens and keys made by PyJWT + cryptography (`Fixtures/make_fixtures.py`), checked by our code.
final class FixtureInteropTests: XCTestCase {
    private func rsaPublic() throws -> RSAPublicKey {
        try RSAPublicKey(pem: Fixture.text("rsa_public.pem"))
    }

    private func p256Public() throws -> P256PublicKey {
        try P256PublicKey(pem: Fixture.text("p256_public.pem"))
    }

    /// The token text with its payload segment re-encoded after flipping one payload byte.
    private func tamperingPayload(_ token: String) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let payload = Base64URL.decode(parts[1]) ?? []
        return [parts[0], Base64URL.encode(flippingBit(payload, at: 12, bit: 1)), parts[2]].joined(separator: ".")
    }

    /// The token text with one bit of its signature flipped.
    private func tamperingSignature(_ token: String) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let signature = Base64URL.decode(parts[2]) ?? []
        return [parts[0], parts[1], Base64URL.encode(flippingBit(signature, at: 17, bit: 3))].joined(separator: ".")
    }

    /// The token text with its header replaced by `header` (payload and signature kept).
    private func replacingHeader(_ token: String, with header: String) -> String {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        return [Base64URL.encode(Array(header.utf8)), parts[1], parts[2]].joined(separator: ".")
    }

    /// RS256 Fixture verifies with fixture public key.
    func testRS256Fixture_Verifies_WithFixturePublicKey() throws {
        let token = try CompactJWS.parse(Fixture.line("rs256_token.txt"))
        XCTAssertEqual(token.header, ["kid": "FixtureK01", "alg": "RS256"])
        XCTAssertEqual(token.payloadJSON?["iss"], "https://appleid.apple.com")
        XCTAssertTrue(token.verifyRS256(with: try rsaPublic()))
    }

    /// RS256 Fixture fails when tampered.
    func testRS256Fixture_Fails_WhenTampered() throws {
        let text = try Fixture.line("rs256_token.txt")
        let key = try rsaPublic()
        XCTAssertTrue(try CompactJWS.parse(text).verifyRS256(with: key))
        XCTAssertFalse(try CompactJWS.parse(tamperingPayload(text)).verifyRS256(with: key))
        XCTAssertFalse(try CompactJWS.parse(tamperingSignature(text)).verifyRS256(with: key))
        XCTAssertFalse(try CompactJWS.parse(replacingHeader(text, with: "{\"kid\":\"FixtureK01\",\"alg\":\"none\"}")).verifyRS256(with: key))
        XCTAssertFalse(try CompactJWS.parse(replacingHeader(text, with: "{\"kid\":\"FixtureK01\",\"alg\":\"RS384\"}")).verifyRS256(with: key))
        XCTAssertFalse(try CompactJWS.parse(text).verifyRS256(with: SharedKeys.rsa.publicKey))
    }

    /// RS256 Fixture verifies with key from fixture JWKS.
    func testRS256Fixture_Verifies_WithKeyFromFixtureJWKS() throws {
        let set = try JWKSet(json: JSONParser.parse(Fixture.text("jwks.json")))
        let token = try CompactJWS.parse(Fixture.line("rs256_token.txt"))
        let jwk = try XCTUnwrap(set.key(withID: token.keyID ?? ""))
        XCTAssertTrue(token.verifyRS256(with: try jwk.rsaPublicKey()))
        XCTAssertNil(set.key(withID: "FixtureK02"))
    }

    /// JWK from fixture public key equals python JWKS entry.
    func testJWK_FromFixturePublicKey_EqualsPythonJWKSEntry() throws {
        let set = try JWKSet(json: JSONParser.parse(Fixture.text("jwks.json")))
        let ours = JWK(kid: "FixtureK01", publicKey: try rsaPublic())
        XCTAssertEqual(set.keys, [ours])
        XCTAssertNotEqual(set.keys, [JWK(kid: "FixtureK01", publicKey: SharedKeys.rsa.publicKey)])
    }

    /// Sign RS256 with fixture key reproduces python signature exactly.
    func testSignRS256_WithFixtureKey_ReproducesPythonSignatureExactly() throws {
        // PKCS#1 v1.5 is deterministic, so our signature over the fixture's signing input
        // must equal the one cryptography produced.
        let fixture = try CompactJWS.parse(Fixture.line("rs256_token.txt"))
        for file in ["rsa_private_pkcs8.pem", "rsa_private_pkcs1.pem"] {
            let key = try RSAPrivateKey(pem: Fixture.text(file))
            XCTAssertEqual(try key.signRS256(fixture.signingInput), fixture.signature, file)
            let ours = try CompactJWS.signRS256(payload: fixture.payload, kid: "FixtureK01", key: key)
            XCTAssertEqual(ours.compact, fixture.compact, file)
        }
        XCTAssertNotEqual(try SharedKeys.rsa.signRS256(fixture.signingInput), fixture.signature)
    }

    /// ES256 Fixture verifies with fixture public key.
    func testES256Fixture_Verifies_WithFixturePublicKey() throws {
        let token = try CompactJWS.parse(Fixture.line("es256_token.txt"))
        XCTAssertEqual(token.header, ["alg": "ES256", "kid": "MOCKKEY001"])
        XCTAssertEqual(token.payloadJSON?.keys, ["iss", "iat", "exp", "aud", "sub"])
        XCTAssertEqual(token.signature.count, 64)
        XCTAssertTrue(token.verifyES256(with: try p256Public()))
    }

    /// ES256 Fixture fails when tampered.
    func testES256Fixture_Fails_WhenTampered() throws {
        let text = try Fixture.line("es256_token.txt")
        let key = try p256Public()
        XCTAssertTrue(try CompactJWS.parse(text).verifyES256(with: key))
        XCTAssertFalse(try CompactJWS.parse(tamperingPayload(text)).verifyES256(with: key))
        XCTAssertFalse(try CompactJWS.parse(tamperingSignature(text)).verifyES256(with: key))
        XCTAssertFalse(try CompactJWS.parse(replacingHeader(text, with: "{\"alg\":\"ES384\",\"kid\":\"MOCKKEY001\"}")).verifyES256(with: key))
        XCTAssertFalse(try CompactJWS.parse(replacingHeader(text, with: "{\"alg\":\"ES256\",\"kid\":\"MOCKKEY002\"}")).verifyES256(with: key))
        XCTAssertFalse(try CompactJWS.parse(text).verifyES256(with: SharedKeys.p256.publicKey))
    }

    /// ES256 DER Fixture fails verification while raw twin passes.
    func testES256DERFixture_FailsVerification_WhileRawTwinPasses() throws {
        let key = try p256Public()
        let der = try CompactJWS.parse(Fixture.line("es256_der_token.txt"))
        let raw = try CompactJWS.parse(Fixture.line("es256_token.txt"))
        XCTAssertEqual(der.signingInput, raw.signingInput)
        XCTAssertEqual(der.signature.first, 0x30)
        XCTAssertTrue((70...72).contains(der.signature.count))
        XCTAssertTrue(raw.verifyES256(with: key))
        XCTAssertFalse(der.verifyES256(with: key))
    }

    /// Sign ES256 with fixture key verifies with fixture public key.
    func testSignES256_WithFixtureKey_VerifiesWithFixturePublicKey() throws {
        let fixture = try CompactJWS.parse(Fixture.line("es256_token.txt"))
        for file in ["p256_private_pkcs8.p8", "p256_private_sec1.pem"] {
            let key = try P256PrivateKey(pem: Fixture.text(file))
            let ours = try CompactJWS.signES256(header: fixture.header, payload: fixture.payload, key: key)
            XCTAssertEqual(ours.headerSegment, fixture.headerSegment, file)
            XCTAssertEqual(ours.payloadSegment, fixture.payloadSegment, file)
            XCTAssertTrue(ours.verifyES256(with: try p256Public()), file)
            XCTAssertFalse(ours.verifyES256(with: SharedKeys.p256.publicKey), file)
        }
    }

    /// Our RS256 token verifies with fixture public key.
    func testSignRS256_OurToken_VerifiesWithFixturePublicKey() throws {
        let key = try RSAPrivateKey(pem: Fixture.text("rsa_private_pkcs8.pem"))
        let token = try CompactJWS.signRS256(payload: Array("{\"sub\":\"x\"}".utf8), kid: "FixtureK01", key: key)
        XCTAssertTrue(try CompactJWS.parse(token.compact).verifyRS256(with: try rsaPublic()))
        XCTAssertFalse(try CompactJWS.parse(token.compact).verifyRS256(with: SharedKeys.rsa.publicKey))
    }
}

import JOSE
import XCTest

/// Compact JWS parsing, signing and verification with generated keys.
final class CompactJWSTests: XCTestCase {
    private let claims = Array("{\"iss\":\"https://appleid.apple.com\",\"sub\":\"001\"}".utf8)

    private func segment(_ text: String) -> String {
        Base64URL.encode(Array(text.utf8))
    }

    /// Sign RS256 writes apple header byte for byte.
    func testSignRS256_WritesAppleHeaderByteForByte() throws {
        let token = try CompactJWS.signRS256(payload: claims, kid: "K1", key: SharedKeys.rsa)
        XCTAssertEqual(token.headerSegment, segment("{\"kid\":\"K1\",\"alg\":\"RS256\"}"))
        XCTAssertEqual(token.header.keys, ["kid", "alg"])
        XCTAssertEqual(token.signature.count, 256)
        XCTAssertEqual(token.signingInput, Array((token.headerSegment + "." + token.payloadSegment).utf8))
        XCTAssertEqual(token.compact.split(separator: ".").count, 3)
    }

    /// Sign RS256 verifies and tampered twins fail.
    func testSignRS256_Verifies_AndTamperedTwinsFail() throws {
        let token = try CompactJWS.signRS256(payload: claims, kid: "K1", key: SharedKeys.rsa)
        let parsed = try CompactJWS.parse(token.compact)
        XCTAssertTrue(parsed.verifyRS256(with: SharedKeys.rsa.publicKey))
        XCTAssertFalse(parsed.verifyRS256(with: SharedKeys.otherRSA.publicKey))
        let tamperedPayload = CompactJWS(header: token.header, payload: flippingBit(claims, at: 10), signature: token.signature)
        XCTAssertFalse(tamperedPayload.verifyRS256(with: SharedKeys.rsa.publicKey))
        let tamperedSignature = CompactJWS(header: token.header, payload: claims, signature: flippingBit(token.signature, at: 0, bit: 7))
        XCTAssertFalse(tamperedSignature.verifyRS256(with: SharedKeys.rsa.publicKey))
    }

    /// Verify RS256 fails when header alg is not RS256.
    func testVerifyRS256_Fails_WhenHeaderAlgIsNotRS256() throws {
        let token = try CompactJWS.signRS256(payload: claims, kid: "K1", key: SharedKeys.rsa)
        for alg: JSONValue in ["ES256", "none", "RS384", "rs256", 256] {
            var header = token.header
            header["alg"] = alg
            // Re-sign over the altered header so only the alg check can reject it.
            let input = CompactJWS(header: header, payload: claims, signature: []).signingInput
            let resigned = CompactJWS(header: header, payload: claims, signature: try SharedKeys.rsa.signRS256(input))
            XCTAssertFalse(resigned.verifyRS256(with: SharedKeys.rsa.publicKey), "\(alg)")
        }
    }

    /// Verify fails when header has crit.
    func testVerify_Fails_WhenHeaderHasCrit() throws {
        let header: JSONObject = ["alg": "ES256", "kid": "K", "crit": ["exp"], "exp": 1]
        let token = try CompactJWS.signES256(header: header, payload: claims, key: SharedKeys.p256)
        var plain = header
        plain["crit"] = nil
        let twin = try CompactJWS.signES256(header: plain, payload: claims, key: SharedKeys.p256)
        XCTAssertTrue(twin.verifyES256(with: SharedKeys.p256.publicKey))
        XCTAssertFalse(token.verifyES256(with: SharedKeys.p256.publicKey))
    }

    /// Sign ES256 writes header in given order and verifies.
    func testSignES256_WritesHeaderInGivenOrder_AndVerifies() throws {
        let header: JSONObject = ["alg": "ES256", "kid": "MOCKKEY001"]
        let token = try CompactJWS.signES256(header: header, payload: claims, key: SharedKeys.p256)
        XCTAssertEqual(token.headerSegment, segment("{\"alg\":\"ES256\",\"kid\":\"MOCKKEY001\"}"))
        XCTAssertEqual(token.signature.count, 64)
        let parsed = try CompactJWS.parse(token.compact)
        XCTAssertTrue(parsed.verifyES256(with: SharedKeys.p256.publicKey))
        XCTAssertFalse(parsed.verifyES256(with: SharedKeys.otherP256.publicKey))
        XCTAssertFalse(parsed.verifyRS256(with: SharedKeys.rsa.publicKey))
    }

    /// Sign ES256 throws when header alg is not ES256.
    func testSignES256_Throws_WhenHeaderAlgIsNotES256() {
        XCTAssertNoThrow(try CompactJWS.signES256(header: ["alg": "ES256"], payload: claims, key: SharedKeys.p256))
        assertThrows(try CompactJWS.signES256(header: ["alg": "RS256"], payload: claims, key: SharedKeys.p256))
        assertThrows(try CompactJWS.signES256(header: ["kid": "K"], payload: claims, key: SharedKeys.p256))
    }

    /// Verify ES256 fails when header alg is not ES256.
    func testVerifyES256_Fails_WhenHeaderAlgIsNotES256() throws {
        let header: JSONObject = ["alg": "ES256", "kid": "K"]
        let token = try CompactJWS.signES256(header: header, payload: claims, key: SharedKeys.p256)
        XCTAssertTrue(token.verifyES256(with: SharedKeys.p256.publicKey))
        var altered = header
        altered["alg"] = "ES384"
        let input = CompactJWS(header: altered, payload: claims, signature: []).signingInput
        let resigned = CompactJWS(header: altered, payload: claims, signature: try SharedKeys.p256.signES256(input))
        XCTAssertFalse(resigned.verifyES256(with: SharedKeys.p256.publicKey))
    }

    /// Parse reads segments and header.
    func testParse_ReadsSegmentsAndHeader() throws {
        let compact = segment("{\"alg\":\"none\",\"kid\":\"K\"}") + "." + segment("{\"a\":1}") + "." + Base64URL.encode([1, 2, 3])
        let token = try CompactJWS.parse(compact)
        XCTAssertEqual(token.header, ["alg": "none", "kid": "K"])
        XCTAssertEqual(token.algorithm, "none")
        XCTAssertEqual(token.keyID, "K")
        XCTAssertEqual(token.payload, Array("{\"a\":1}".utf8))
        XCTAssertEqual(token.payloadJSON, ["a": 1])
        XCTAssertEqual(token.signature, [1, 2, 3])
        XCTAssertEqual(token.compact, compact)
    }

    /// Parse accepts substring input.
    func testParse_AcceptsSubstringInput() throws {
        let compact = "Bearer " + segment("{\"alg\":\"none\"}") + ".." 
        let token = try CompactJWS.parse(compact.dropFirst(7))
        XCTAssertEqual(token.payload, [])
        XCTAssertEqual(token.signature, [])
    }

    /// Payload JSON is nil when payload is not an object.
    func testPayloadJSON_IsNil_WhenPayloadIsNotAnObject() throws {
        let header = segment("{\"alg\":\"none\"}")
        XCTAssertNotNil(try CompactJWS.parse(header + "." + segment("{}") + ".").payloadJSON)
        XCTAssertNil(try CompactJWS.parse(header + "." + segment("[1]") + ".").payloadJSON)
        XCTAssertNil(try CompactJWS.parse(header + "." + segment("{\"a\":1,\"a\":2}") + ".").payloadJSON)
        XCTAssertNil(try CompactJWS.parse(header + "." + segment("not json") + ".").payloadJSON)
    }

    /// Parse throws when shape is wrong.
    func testParse_Throws_WhenShapeIsWrong() throws {
        let header = segment("{\"alg\":\"RS256\"}")
        let payload = segment("{}")
        let good = header + "." + payload + "." + Base64URL.encode([1, 2])
        XCTAssertNoThrow(try CompactJWS.parse(good))
        let bad: [String] = [
            header + "." + payload,                                  // two segments
            good + ".",                                              // four segments
            good + "." + payload,                                    // four segments
            "",
            "..",
            "=" + header + "." + payload + ".AQI",                   // bad base64 header
            header + "." + payload + "=.AQI",                        // bad base64 payload
            header + "." + payload + ".AQI=",                        // bad base64 signature
            header + "." + payload + ".A",                           // impossible length
            header + " ." + payload + ".AQI",                        // whitespace
            segment("[\"alg\",\"RS256\"]") + "." + payload + ".AQI", // non-object header
            segment("\"RS256\"") + "." + payload + ".AQI",           // string header
            segment("{\"kid\":\"K\"}") + "." + payload + ".AQI",     // no alg
            segment("{\"alg\":256}") + "." + payload + ".AQI",       // non-string alg
            segment("{\"alg\":\"RS256\",\"alg\":\"none\"}") + "." + payload + ".AQI", // duplicate alg
            segment("{\"alg\":\"RS256\",}") + "." + payload + ".AQI", // not JSON
            "." + payload + ".AQI",                                  // empty header
        ]
        for token in bad {
            assertThrows(try CompactJWS.parse(token), token) { error in
                assertJOSEError(error) { if case .malformedJWS = $0 { return true } else { return false } }
            }
        }
    }

    /// Parse throws when the token exceeds 64 KiB.
    func testParse_Throws_WhenTokenExceeds64KiB() throws {
        let header = segment("{\"alg\":\"RS256\"}")
        let fits = header + "." + String(repeating: "A", count: CompactJWS.maximumLength - header.utf8.count - 2) + "."
        XCTAssertEqual(fits.utf8.count, CompactJWS.maximumLength)
        XCTAssertNoThrow(try CompactJWS.parse(fits))
        assertThrows(try CompactJWS.parse(fits + "AAAA"))
    }

    /// Every truncation fails to parse or verify.
    func testEveryTruncation_FailsToParseOrVerify() throws {
        let token = try CompactJWS.signRS256(payload: claims, kid: "K1", key: SharedKeys.rsa).compact
        XCTAssertTrue(try CompactJWS.parse(token).verifyRS256(with: SharedKeys.rsa.publicKey))
        for length in 0..<token.count {
            let prefix = token.prefix(length)
            if let parsed = try? CompactJWS.parse(prefix) {
                XCTAssertFalse(parsed.verifyRS256(with: SharedKeys.rsa.publicKey), "length \(length)")
            }
        }
    }
}

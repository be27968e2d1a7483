import JOSE
import XCTest

/// RSA JWKs and JWK Sets in Apple's shape.
final class JWKTests: XCTestCase {
    /// JSON writes apple member order.
    func testJSON_WritesAppleMemberOrder() {
        let jwk = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey)
        let text = String(decoding: JSONWriter.compact(jwk.json), as: UTF8.self)
        XCTAssertEqual(text, "{\"kty\":\"RSA\",\"kid\":\"K1\",\"use\":\"sig\",\"alg\":\"RS256\",\"n\":\"\(jwk.n)\",\"e\":\"AQAB\"}")
        XCTAssertEqual(jwk.json.objectValue?.keys, ["kty", "kid", "use", "alg", "n", "e"])
    }

    /// Init JSON round trips and rebuilds the key.
    func testInitJSON_RoundTrips_AndRebuildsTheKey() throws {
        let jwk = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey)
        let reread = try JWK(json: JSONParser.parse(JSONWriter.compact(jwk.json)))
        XCTAssertEqual(reread, jwk)
        XCTAssertEqual(try reread.rsaPublicKey().pem, try SharedKeys.rsa.publicKey.pem)
        XCTAssertNotEqual(reread, JWK(kid: "K1", publicKey: SharedKeys.otherRSA.publicKey))
    }

    /// Init JSON ignores extra members.
    func testInitJSON_IgnoresExtraMembers() throws {
        var object = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey).json.objectValue ?? JSONObject()
        object["x5t"] = "ignored"
        XCTAssertEqual(try JWK(json: .object(object)).kid, "K1")
    }

    /// Init JSON throws when member missing or wrong type.
    func testInitJSON_Throws_WhenMemberMissingOrWrongType() throws {
        let good = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey).json.objectValue ?? JSONObject()
        XCTAssertNoThrow(try JWK(json: .object(good)))
        for name in ["kty", "kid", "use", "alg", "n", "e"] {
            var missing = good
            missing[name] = nil
            assertThrows(try JWK(json: .object(missing)), name)
            var wrongType = good
            wrongType[name] = 1
            assertThrows(try JWK(json: .object(wrongType)), name)
        }
        assertThrows(try JWK(json: .array(good.map(\.value))))
    }

    /// Init JSON throws when kty is not RSA.
    func testInitJSON_Throws_WhenKtyIsNotRSA() {
        var object = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey).json.objectValue ?? JSONObject()
        object["kty"] = "EC"
        assertThrows(try JWK(json: .object(object))) { error in
            XCTAssertEqual(error as? JOSEError, .unsupportedAlgorithm("JWK kty EC"))
        }
    }

    /// Init JSON throws when the modulus is not base64url.
    func testInitJSON_Throws_WhenModulusIsNotBase64URL() {
        var object = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey).json.objectValue ?? JSONObject()
        object["n"] = .string((object["n"]?.stringValue ?? "") + "=")
        assertThrows(try JWK(json: .object(object)))
    }

    /// rsaPublicKey() throws when modulus is too short.
    func testRSAPublicKey_Throws_WhenModulusIsTooShort() throws {
        var jwk = JWK(kid: "K1", publicKey: SharedKeys.rsa.publicKey)
        XCTAssertNoThrow(try jwk.rsaPublicKey())
        jwk.n = Base64URL.encode(SharedKeys.rsa.publicKey.modulus.suffix(64))
        assertThrows(try jwk.rsaPublicKey())
    }

    /// JWK Set: JSON writes keys array.
    func testJWKSet_JSONWritesKeysArray() {
        let set = JWKSet(keys: [JWK(kid: "A", publicKey: SharedKeys.rsa.publicKey)])
        let text = String(decoding: JSONWriter.compact(set.json), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"A\",\"use\":\"sig\""))
        XCTAssertTrue(text.hasSuffix("\"e\":\"AQAB\"}]}"))
    }

    /// JWK Set: round trips and finds key by ID.
    func testJWKSet_RoundTrips_AndFindsKeyByID() throws {
        let set = JWKSet(keys: [
            JWK(kid: "A", publicKey: SharedKeys.rsa.publicKey),
            JWK(kid: "B", publicKey: SharedKeys.otherRSA.publicKey),
        ])
        let reread = try JWKSet(json: JSONParser.parse(JSONWriter.compact(set.json)))
        XCTAssertEqual(reread, set)
        XCTAssertEqual(reread.key(withID: "B")?.n, Base64URL.encode(SharedKeys.otherRSA.publicKey.modulus))
        XCTAssertNil(reread.key(withID: "C"))
    }

    /// JWK Set: skips unknown key types.
    func testJWKSet_SkipsUnknownKeyTypes() throws {
        let rsa = JWK(kid: "A", publicKey: SharedKeys.rsa.publicKey).json
        let ec: JSONValue = ["kty": "EC", "kid": "E", "crv": "P-256", "x": "AA", "y": "AA"]
        let set = try JWKSet(json: ["keys": [ec, rsa]])
        XCTAssertEqual(set.keys.map(\.kid), ["A"])
    }

    /// JWK Set: throws when shape is wrong.
    func testJWKSet_Throws_WhenShapeIsWrong() {
        let rsa = JWK(kid: "A", publicKey: SharedKeys.rsa.publicKey).json
        XCTAssertNoThrow(try JWKSet(json: ["keys": [rsa]]))
        assertThrows(try JWKSet(json: ["key": [rsa]]))
        assertThrows(try JWKSet(json: ["keys": rsa]))
        assertThrows(try JWKSet(json: [rsa]))
        assertThrows(try JWKSet(json: ["keys": [["kid": "no kty"]]]))
        assertThrows(try JWKSet(json: ["keys": [["kty": "RSA", "kid": "incomplete"]]]))
    }
}

import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `/__mock/keys` in memory: list, publish, rotate, activate, retire, with exact status codes and bodies.
/// Every accepted input has a refused twin.
final class KeysRouteTests: XCTestCase {
    func testKeysRoute_ListsEveryKeyWithStateAndTimes() async throws {
        let mock = try frozenClient()
        let initial = #"{"active_kid":"W2ek7HdPaL","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"},"#
            + #"{"activated_at":null,"kid":"Ymq4vB9xTz","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"},"#
            + #"{"activated_at":null,"kid":"r8TcNf3QsJ","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"}]}"#
        assertControl(try await mock.get("/__mock/keys"), 200, initial)
        assertStatus(try await moveClock(mock, #"{"advance":60}"#), 200)
        assertControl(try await controlRequest(mock, "DELETE", "/__mock/keys/r8TcNf3QsJ"), 200, #"{"kid":"r8TcNf3QsJ","state":"retired"}"#)
        assertStatus(try await moveClock(mock, #"{"advance":60}"#), 200)
        assertControl(try await mock.postJSON("/__mock/keys/Ymq4vB9xTz/activate", ""), 200, #"{"kid":"Ymq4vB9xTz","state":"active"}"#)
        let later = #"{"active_kid":"Ymq4vB9xTz","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"published"},"#
            + #"{"activated_at":"2023-11-14T22:15:20Z","kid":"Ymq4vB9xTz","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"},"#
            + #"{"activated_at":null,"kid":"r8TcNf3QsJ","published_at":"2023-11-14T22:13:20Z","retired_at":"2023-11-14T22:14:20Z","state":"retired"}]}"#
        assertControl(try await mock.get("/__mock/keys"), 200, later)
    }

    func testKeysRoute_ListsTheKeysInOneState_AndRefusesAnUnknownStateOrParameter() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.get("/__mock/keys?state=active"), 200, #"{"active_kid":"W2ek7HdPaL","keys":["#
            + #"{"activated_at":"2023-11-14T22:13:20Z","kid":"W2ek7HdPaL","published_at":"2023-11-14T22:13:20Z","retired_at":null,"state":"active"}]}"#)
        let published = try await mock.get("/__mock/keys?state=published")
        XCTAssertEqual(published.status, 200)
        XCTAssertEqual(try keyIDs(published), ["Ymq4vB9xTz", "r8TcNf3QsJ"])
        let retired = try await mock.get("/__mock/keys?state=retired")
        XCTAssertEqual(try keyIDs(retired), [])
        // The twins: a state no key has a name for, and a parameter the route does not declare.
        assertControl(try await mock.get("/__mock/keys?state=signing"), 400, #"{"error":"expected published, active or retired","field":"state"}"#)
        assertControl(try await mock.get("/__mock/keys?kid=W2ek7HdPaL"), 400, #"{"error":"unknown parameter (expected state)","field":"kid"}"#)
    }

    /// The kids of a `GET /__mock/keys` answer, in order.
    private func keyIDs(_ answer: MockAnswer) throws -> [String] {
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any])
        return try XCTUnwrap(object["keys"] as? [[String: Any]]).compactMap { $0["kid"] as? String }
    }

    func testKeysRoute_PublishesAGeneratedOrNamedKey_WithoutSigningWithIt() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"Custom1"}"#), 201, #"{"kid":"Custom1","state":"published"}"#)
        let generated = try await mock.postJSON("/__mock/keys", "")
        XCTAssertEqual(generated.status, 201, generated.text)
        let kid = try XCTUnwrap(try jsonObject(generated.body)["kid"]?.stringValue)
        XCTAssertTrue(matches(kid, "^[A-Za-z0-9]{10}$"), kid)
        XCTAssertEqual(generated.text, #"{"kid":"\#(kid)","state":"published"}"#)
        let kids = try await publishedKids(mock)
        XCTAssertEqual(kids, (ControlFixture.initialKeys + ["Custom1", kid]).sorted())
        let keyState = try await keyState(mock, "Custom1")
        XCTAssertEqual(keyState, "published")
        let mintedKid = try CompactJWS.parse(try await mintIDToken(mock)).keyID
        XCTAssertEqual(mintedKid, "W2ek7HdPaL")
    }

    func testKeysRoute_PublishesASuppliedPEM_UnderANewKid() async throws {
        let mock = try frozenClient()
        let pem = try String(contentsOfFile: repositoryRoot + "/Keys/signing/Ymq4vB9xTz.pem", encoding: .utf8)
        assertControl(try await mock.postJSON("/__mock/keys", jsonText(["kid": "Copy1", "pem": .string(pem)])), 201, #"{"kid":"Copy1","state":"published"}"#)
        let set = try await jwks(mock)
        XCTAssertEqual(try XCTUnwrap(set.key(withID: "Copy1")).n, try XCTUnwrap(set.key(withID: "Ymq4vB9xTz")).n)
        // Signing with it: tokens verify under the supplied key's JWK.
        assertStatus(try await mock.postJSON("/__mock/keys/Copy1/activate", ""), 200)
        let token = try await mintIDToken(mock)
        XCTAssertEqual(try CompactJWS.parse(token).keyID, "Copy1")
        let tokenVerifies = try await verifiesAgainstPublishedKeys(mock, token)
        XCTAssertEqual(tokenVerifies, true)
    }

    func testKeysRoute_RefusesDuplicateBadKidAndBadPEM() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"Ymq4vB9xTz"}"#), 409,
                      #"{"error":"a key with this kid exists already","field":"kid","kid":"Ymq4vB9xTz"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"bad-kid!"}"#), 400,
                      #"{"error":"expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)","field":"kid"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"ElevenChars"}"#), 400,
                      #"{"error":"expected a key id of 1 to 10 letters and digits (Apple's are 10, e.g. W2ek7HdPaL)","field":"kid"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":7}"#), 400, #"{"error":"expected a string","field":"kid"}"#)
        assertControl(try await mock.postJSON("/__mock/keys", #"{"kid":"Custom1","use":"sig"}"#), 400,
                      #"{"error":"unknown field (expected one of: kid, pem)","field":"use"}"#)
        let junk = try await mock.postJSON("/__mock/keys", #"{"kid":"Custom2","pem":"not a pem"}"#)
        XCTAssertEqual(junk.status, 400)
        let junkBody = try jsonObject(junk.body)
        XCTAssertEqual(junkBody.keys, ["error", "field"])
        XCTAssertEqual(junkBody["field"], "pem")
        XCTAssertTrue(junkBody["error"]?.stringValue?.hasPrefix("expected a PEM RSA private key (PKCS#8): ") == true, junk.text)
        let ecKey = try String(contentsOfFile: repositoryRoot + "/Keys/AuthKey_MOCKKEY001.p8", encoding: .utf8)
        let ec = try await mock.postJSON("/__mock/keys", jsonText(["kid": "Custom3", "pem": .string(ecKey)]))
        XCTAssertEqual(ec.status, 400)
        XCTAssertEqual(try jsonObject(ec.body)["field"], "pem")
        let kids = try await publishedKids(mock)
        XCTAssertEqual(kids, ControlFixture.initialKeys.sorted())
        let keyCount = try await keyList(mock)["keys"]?.arrayValue?.count
        XCTAssertEqual(keyCount, 3)
    }

    func testKeysRoute_RotatePublishesAndActivatesAFreshKey_KeepingThePreviousPublished() async throws {
        let mock = try frozenClient()
        // Refused twin first: rotate takes no fields.
        let refused = try await mock.postJSON("/__mock/keys/rotate", #"{"kid":"Custom1"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try jsonObject(refused.body)["field"], "kid")
        var kids = try await publishedKids(mock)
        XCTAssertEqual(kids, ControlFixture.initialKeys.sorted())
        let rotated = try await mock.postJSON("/__mock/keys/rotate", "")
        XCTAssertEqual(rotated.status, 200, rotated.text)
        let kid = try XCTUnwrap(try jsonObject(rotated.body)["kid"]?.stringValue)
        XCTAssertTrue(matches(kid, "^[A-Za-z0-9]{10}$"), kid)
        assertControl(rotated, 200, #"{"kid":"\#(kid)","previous":"W2ek7HdPaL","retired":[],"state":"active"}"#)
        let fetched = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched, .string(kid))
        kids = try await publishedKids(mock)
        XCTAssertEqual(kids, (ControlFixture.initialKeys + [kid]).sorted())
        let keyState = try await keyState(mock, "W2ek7HdPaL")
        XCTAssertEqual(keyState, "published")
        let token = try await mintIDToken(mock)
        XCTAssertEqual(try CompactJWS.parse(token).keyID, kid)
        let tokenVerifies = try await verifiesAgainstPublishedKeys(mock, token)
        XCTAssertEqual(tokenVerifies, true)
    }

    func testKeysRoute_ActivateRefusesUnknownAndRetiredKids_AndOtherMethods() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/keys/Nope1/activate", ""), 404, #"{"error":"no key with this kid","field":"kid","kid":"Nope1"}"#)
        assertStatus(try await controlRequest(mock, "DELETE", "/__mock/keys/r8TcNf3QsJ"), 200)
        assertControl(try await mock.postJSON("/__mock/keys/r8TcNf3QsJ/activate", ""), 409, #"{"error":"the key is retired","field":"kid","kid":"r8TcNf3QsJ"}"#)
        let get = try await mock.get("/__mock/keys/Ymq4vB9xTz/activate")
        assertControl(get, 405, #"{"error":"method not allowed (allowed: POST)","field":null}"#)
        XCTAssertEqual(get.headers["Allow"], "POST")
        assertStatus(try await mock.get("/__mock/keys/Ymq4vB9xTz/deactivate"), 404)
        let fetched = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched, "W2ek7HdPaL")
        // Twin: a published kid activates.
        assertControl(try await mock.postJSON("/__mock/keys/Ymq4vB9xTz/activate", ""), 200, #"{"kid":"Ymq4vB9xTz","state":"active"}"#)
        let activeKid = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(activeKid, "Ymq4vB9xTz")
    }

    func testKeysRoute_DeleteRefusesTheSigningKeyAndUnknownKids_AndAnswers405ToGet() async throws {
        let mock = try frozenClient()
        assertControl(try await controlRequest(mock, "DELETE", "/__mock/keys/W2ek7HdPaL"), 409,
                      #"{"error":"the key signs new tokens: activate another key before retiring it","field":"kid","kid":"W2ek7HdPaL"}"#)
        assertControl(try await controlRequest(mock, "DELETE", "/__mock/keys/Nope1"), 404, #"{"error":"no key with this kid","field":"kid","kid":"Nope1"}"#)
        let get = try await mock.get("/__mock/keys/Ymq4vB9xTz")
        assertControl(get, 405, #"{"error":"method not allowed (allowed: DELETE)","field":null}"#)
        XCTAssertEqual(get.headers["Allow"], "DELETE")
        var kids = try await publishedKids(mock)
        XCTAssertEqual(kids, ControlFixture.initialKeys.sorted())
        // Twins: a published key that does not sign is retired; retiring it again is a conflict.
        assertControl(try await controlRequest(mock, "DELETE", "/__mock/keys/Ymq4vB9xTz"), 200, #"{"kid":"Ymq4vB9xTz","state":"retired"}"#)
        assertControl(try await controlRequest(mock, "DELETE", "/__mock/keys/Ymq4vB9xTz"), 409, #"{"error":"the key is retired","field":"kid","kid":"Ymq4vB9xTz"}"#)
        kids = try await publishedKids(mock)
        XCTAssertEqual(kids, ["W2ek7HdPaL", "r8TcNf3QsJ"])
    }

    func testKeysRoute_AfterDelete_TheKidIsGoneAndTokensItSignedFindNoKey() async throws {
        let mock = try frozenClient()
        let old = try await mintIDToken(mock)
        XCTAssertEqual(try CompactJWS.parse(old).keyID, "W2ek7HdPaL")
        assertStatus(try await mock.postJSON("/__mock/keys/rotate", ""), 200)
        let new = try await mintIDToken(mock)
        // While published, the old key still verifies what it signed.
        var oldVerifies = try await verifiesAgainstPublishedKeys(mock, old)
        XCTAssertEqual(oldVerifies, true)
        assertControl(try await controlRequest(mock, "DELETE", "/__mock/keys/W2ek7HdPaL"), 200, #"{"kid":"W2ek7HdPaL","state":"retired"}"#)
        let stillPublished = try await publishedKids(mock).contains("W2ek7HdPaL")
        XCTAssertFalse(stillPublished)
        oldVerifies = try await verifiesAgainstPublishedKeys(mock, old)
        XCTAssertNil(oldVerifies)
        let newVerifies = try await verifiesAgainstPublishedKeys(mock, new)
        XCTAssertEqual(newVerifies, true)
        let keyState = try await keyState(mock, "W2ek7HdPaL")
        XCTAssertEqual(keyState, "retired")
    }
}

import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// A few whole scenarios written once over `MockClient` and run in both modes, in memory and
/// live (Hummingbird's `app.test(.router | .live)`): what an endpoint answers must not depend
/// on the door, and the in-memory suites stand for the live server only as long as it does not.
final class BothModesScenarioTests: XCTestCase {
    private static let codeKeys = ["access_token", "token_type", "expires_in", "refresh_token", "id_token"]
    private static let refreshKeys = ["access_token", "token_type", "expires_in", "id_token"]

    // MARK: - Web sign-in, exchange, verification, refresh

    func testWebSignIn_ExchangesVerifiesAndRefreshes_InMemory() async throws {
        try await webSignIn(try frozenClient(.inMemory))
    }

    func testWebSignIn_ExchangesVerifiesAndRefreshes_Live() async throws {
        try await webSignIn(try frozenClient(.live))
    }

    private func webSignIn(_ mock: some MockClient) async throws {
        let fields = try await mock.headlessAuthorize(state: "st-9", nonce: "n-9")
        XCTAssertEqual(fields["state"], "st-9")
        XCTAssertEqual(fields["user"], #"{"name":{"firstName":"Alice","lastName":"Appleseed"},"email":"alice@example.com"}"#)
        let code = try XCTUnwrap(fields["code"])
        XCTAssertTrue(matches(code, codePattern), code)
        try await mock.advanceClock(by: 10)
        let tokens = try assertTokenAnswer(try await mock.redeem(code), keys: Self.codeKeys)
        let access = try XCTUnwrap(tokens["access_token"]?.stringValue)
        let payload = try await mock.verifiedPayload(tokens["id_token"]?.stringValue)
        XCTAssertEqual(payload, #"{"iss":"https://appleid.apple.com","aud":"com.example.web","exp":1700086410,"iat":1700000010,"sub":"\#(teamSub("alice"))","nonce":"n-9","at_hash":"\#(leftHalfHash(access))","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true}"#)
        // The twin: the same code twice is refused, the refresh token works.
        assertAppleError(try await mock.redeem(code), #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
        let refreshed = try assertTokenAnswer(try await mock.refresh(try XCTUnwrap(tokens["refresh_token"]?.stringValue)), keys: Self.refreshKeys)
        let claims = try await mock.verifiedClaims(refreshed["id_token"]?.stringValue)
        XCTAssertEqual(claims["sub"], .string(teamSub("alice")))
    }

    // MARK: - Revocation

    func testRevocation_EndsTheTokensAndTheCredential_InMemory() async throws {
        try await revocation(try frozenClient(.inMemory))
    }

    func testRevocation_EndsTheTokensAndTheCredential_Live() async throws {
        try await revocation(try frozenClient(.live))
    }

    private func revocation(_ mock: some MockClient) async throws {
        let tokens = try await mock.webTokens()
        let bobs = try await mock.webTokens(user: "bob")
        let refresh = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
        let state = "/__mock/credential-state?user=alice&client_id=com.example.web"
        let before = try await mock.get(state)
        XCTAssertEqual(before.text, #"{"state":"authorized"}"#)
        let revoked = try await mock.revoke(refresh, hint: "refresh_token")
        XCTAssertEqual(revoked.status, 200)
        XCTAssertEqual(revoked.body, [])
        XCTAssertEqual(revoked.headers.fields.map { "\($0.name): \($0.value)" }, ["Server: Apple"])
        assertAppleError(try await mock.refresh(refresh), #"{"error":"invalid_grant"}"#)
        let after = try await mock.get(state)
        XCTAssertEqual(after.text, #"{"state":"revoked"}"#)
        // The twin: bob's tokens live on.
        try assertTokenAnswer(try await mock.refresh(try XCTUnwrap(bobs["refresh_token"]?.stringValue)), keys: Self.refreshKeys)
    }

    // MARK: - Key rotation

    func testKeyRotation_SignsWithTheNewKey_WhileTheOldStaysPublished_InMemory() async throws {
        try await keyRotation(try frozenClient(.inMemory))
    }

    func testKeyRotation_SignsWithTheNewKey_WhileTheOldStaysPublished_Live() async throws {
        try await keyRotation(try frozenClient(.live))
    }

    private func keyRotation(_ mock: some MockClient) async throws {
        let before = try await mock.nativeSignIn()
        let oldToken = try XCTUnwrap(try jsonObject(before.body)["identityToken"]?.stringValue)
        XCTAssertEqual(try CompactJWS.parse(oldToken).keyID, "W2ek7HdPaL")
        let rotated = try await mock.postJSON("/__mock/keys/rotate", "")
        XCTAssertEqual(rotated.status, 200, rotated.text)
        let kid = try XCTUnwrap(try jsonObject(rotated.body)["kid"]?.stringValue)
        XCTAssertEqual(rotated.text, #"{"kid":"\#(kid)","previous":"W2ek7HdPaL","retired":[],"state":"active"}"#)
        let after = try await mock.nativeSignIn(user: "bob")
        let newToken = try XCTUnwrap(try jsonObject(after.body)["identityToken"]?.stringValue)
        XCTAssertEqual(try CompactJWS.parse(newToken).keyID, kid)
        // Both verify under /auth/keys: the new signer and the old key, still published.
        let newClaims = try await mock.verifiedClaims(newToken)
        XCTAssertEqual(newClaims["sub"], .string(teamSub("bob")))
        let oldClaims = try await mock.verifiedClaims(oldToken)
        XCTAssertEqual(oldClaims["sub"], .string(teamSub("alice")))
        // The twin: once retired, the old key verifies nothing.
        let retired = try await mock.delete("/__mock/keys/W2ek7HdPaL")
        XCTAssertEqual(retired.text, #"{"kid":"W2ek7HdPaL","state":"retired"}"#)
        let published = try await mock.publishedKeys()
        XCTAssertNil(published.key(withID: "W2ek7HdPaL"))
        XCTAssertNotNil(published.key(withID: kid))
    }

    // MARK: - A fault

    func testFault_AnswersInsteadOfApple_TheTimesItWasAskedTo_InMemory() async throws {
        try await fault(try frozenClient(.inMemory))
    }

    func testFault_AnswersInsteadOfApple_TheTimesItWasAskedTo_Live() async throws {
        try await fault(try frozenClient(.live))
    }

    private func fault(_ mock: some MockClient) async throws {
        let installed = try await mock.postJSON("/__mock/faults", #"{"path":"/auth/token","grant_type":"authorization_code","times":1,"action":"respond","status":503,"headers":{"Retry-After":"5"},"body":"busy"}"#)
        XCTAssertEqual(installed.status, 201, installed.text)
        XCTAssertEqual(try jsonObject(installed.body)["id"], "f1")
        let code = try await mock.webCode()
        let refused = try await mock.redeem(code)
        assertAnswer(refused, 503, headers: ["Server: Apple", "Retry-After: 5"], body: "busy")
        // Apple's endpoint never saw it: the same code is redeemed once the fault has fired.
        try assertTokenAnswer(try await mock.redeem(code), keys: Self.codeKeys)
        let listed = try jsonObject(try await mock.get("/__mock/faults/f1").body)
        XCTAssertEqual(listed["fired"], 1)
        XCTAssertEqual(listed["remaining"], 0)
    }

    // MARK: - An account event and its notification

    func testAccountEvent_IsRecordedAndLogged_InMemory() async throws {
        try await accountEvent(try frozenClient(.inMemory))
    }

    func testAccountEvent_IsRecordedAndLogged_Live() async throws {
        try await accountEvent(try frozenClient(.live))
    }

    private func accountEvent(_ mock: some MockClient) async throws {
        let refused = try await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        assertAnswer(refused, 409, headers: ["Content-Type: application/json"],
                     body: #"{"error":"\"alice\" has not signed in to this app group","field":"user"}"#)
        assertStatus(try await mock.nativeSignIn(), 200)
        let accepted = try await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        assertAnswer(accepted, 202, headers: ["Content-Type: application/json"],
                     body: #"{"notification":1,"notifications":[1],"type":"consent-revoked","user":"alice"}"#)
        // Waits in the mock until the record has settled (the scenario registers no URL).
        let log = try jsonObject(try await mock.get("/__mock/notifications?after=0&wait=5").body)
        let record = try XCTUnwrap(log["notifications"]?.arrayValue?.first?.objectValue)
        XCTAssertEqual(record["outcome"], "no_url")
        let events = try jsonObject(try await mock.get("/__mock/events?type=account-event").body)["events"]?.arrayValue ?? []
        XCTAssertEqual(events.count, 1)
        let state = try await mock.get("/__mock/credential-state?user=alice&client_id=com.example.app")
        XCTAssertEqual(state.text, #"{"state":"revoked"}"#)
    }
}

import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /__mock/sign-in`: what `ASAuthorizationAppleIDCredential` hands an app, and how its
/// code redeems at `/auth/token` (docs/apple-behaviour.md §1.3, §4, §5).
final class NativeSignInTests: XCTestCase {
    func testNativeSignIn_FirstTime_GivesCredentialWithNameEmailAndRealUserStatus() async throws {
        let mock = try frozenClient()
        let response = try await mock.nativeSignIn(nonce: "nn-1")
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.headers["Content-Type"], "application/json")
        let answer = try jsonObject(response.body)
        let code = try XCTUnwrap(answer["authorizationCode"]?.stringValue)
        let identityToken = try XCTUnwrap(answer["identityToken"]?.stringValue)
        XCTAssertTrue(matches(code, codePattern), code)
        let sub = teamSub("alice")
        XCTAssertEqual(response.text, #"{"authorizationCode":"\#(code)","email":"alice@example.com","fullName":{"familyName":"Appleseed","givenName":"Alice"},"identityToken":"\#(identityToken)","realUserStatus":2,"user":"\#(sub)"}"#)
        let payload = try await mock.verifiedPayload(identityToken)
        XCTAssertEqual(payload,
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.app","exp":1700086400,"iat":1700000000,"sub":"\#(sub)","nonce":"nn-1","c_hash":"\#(leftHalfHash(code))","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true,"real_user_status":2}"#)
    }

    func testNativeSignIn_SecondTime_HasNoNameNoEmailNoRealUserStatus() async throws {
        let mock = try frozenClient()
        assertStatus(try await mock.nativeSignIn(), 200)
        try await mock.advanceClock(by: 60)
        let response = try await mock.nativeSignIn(nonce: nil)
        XCTAssertEqual(response.status, 200, response.text)
        let answer = try jsonObject(response.body)
        let code = try XCTUnwrap(answer["authorizationCode"]?.stringValue)
        let identityToken = try XCTUnwrap(answer["identityToken"]?.stringValue)
        XCTAssertEqual(response.text, #"{"authorizationCode":"\#(code)","email":null,"fullName":null,"identityToken":"\#(identityToken)","realUserStatus":0,"user":"\#(teamSub("alice"))"}"#)
        // The id_token keeps the email (emailOnLaterLogins), loses real_user_status.
        let payload = try await mock.verifiedPayload(identityToken)
        XCTAssertEqual(payload,
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.app","exp":1700086460,"iat":1700000060,"sub":"\#(teamSub("alice"))","c_hash":"\#(leftHalfHash(code))","email":"alice@example.com","email_verified":true,"auth_time":1700000060,"nonce_supported":true}"#)
    }

    func testNativeSignIn_HiddenEmail_IsTheRelayAddress() async throws {
        let mock = try frozenClient()
        let answer = try jsonObject(try await mock.nativeSignIn(user: "alice", hideEmail: true).body)
        let email = try XCTUnwrap(answer["email"]?.stringValue)
        XCTAssertTrue(matches(email, relayPattern), email)
        let claims = try await mock.verifiedClaims(answer["identityToken"]?.stringValue)
        XCTAssertEqual(claims["email"], .string(email))
        XCTAssertEqual(claims["is_private_email"], true)
        // Twin: bob shares.
        let bob = try jsonObject(try await mock.nativeSignIn(user: "bob", hideEmail: false).body)
        XCTAssertEqual(bob["email"], "bob@example.com")
        let bobPrivate = try await mock.verifiedClaims(bob["identityToken"]?.stringValue)["is_private_email"]
        XCTAssertNil(bobPrivate)
    }

    func testNativeSignIn_OnlyRequestedScopes() async throws {
        let mock = try frozenClient()
        let none = try jsonObject(try await mock.nativeSignIn(user: "alice", scopes: []).body)
        XCTAssertEqual(none["email"], .null)
        XCTAssertEqual(none["fullName"], .null)
        XCTAssertEqual(none["realUserStatus"], 2, "still the first sign-in")
        let claims = try await mock.verifiedClaims(none["identityToken"]?.stringValue)["email"]
        XCTAssertNil(claims)
        let nameOnly = try jsonObject(try await mock.nativeSignIn(user: "bob", scopes: ["name"]).body)
        XCTAssertEqual(nameOnly["email"], .null)
        XCTAssertEqual(nameOnly["fullName"], .object(JSONObject([("familyName", "Bobson"), ("givenName", "Bob")])))
    }

    func testNativeSignIn_CodeRedeemsWithBundleIDAndNoRedirectURI() async throws {
        let mock = try frozenClient()
        let signIn = try jsonObject(try await mock.nativeSignIn(nonce: "nn-2").body)
        let code = try XCTUnwrap(signIn["authorizationCode"]?.stringValue)
        try await mock.advanceClock(by: 5)
        // Refused twins first: they must not burn the code.
        assertAppleError(try await mock.redeem(code, clientID: "com.example.app", redirectURI: webRedirect),
                         #"{"error":"invalid_grant","error_description":"redirect_uri mismatch. The code was not issued to http://localhost:3000/callback."}"#)
        assertAppleError(try await mock.redeem(code, clientID: "com.example.web", redirectURI: nil),
                         #"{"error":"invalid_grant","error_description":"client_id mismatch. The code was not issued to com.example.web."}"#)
        let answer = try assertTokenAnswer(try await mock.redeem(code, clientID: "com.example.app", redirectURI: nil),
                                           keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        let access = try XCTUnwrap(answer["access_token"]?.stringValue)
        let payload = try await mock.verifiedPayload(answer["id_token"]?.stringValue)
        XCTAssertEqual(payload,
                       #"{"iss":"https://appleid.apple.com","aud":"com.example.app","exp":1700086405,"iat":1700000005,"sub":"\#(teamSub("alice"))","nonce":"nn-2","at_hash":"\#(leftHalfHash(access))","email":"alice@example.com","email_verified":true,"auth_time":1700000000,"nonce_supported":true,"real_user_status":2}"#)
        assertAppleError(try await mock.redeem(code, clientID: "com.example.app", redirectURI: nil),
                         #"{"error":"invalid_grant","error_description":"The code has already been used."}"#)
    }

    func testNativeSignIn_ErrorsNameTheField() async throws {
        let mock = try frozenClient()
        let cases: [(String, String)] = [
            (#"{"user":"alice","client_id":"com.example.web"}"#,
             #"{"error":"native sign-in needs an App ID (bundle id); \"com.example.web\" is a Services ID","field":"client_id"}"#),
            (#"{"user":"mallory","client_id":"com.example.app"}"#, #"{"error":"no user \"mallory\" in the scenario","field":"user"}"#),
            (#"{"user":"alice","client_id":"com.example.nope"}"#, #"{"error":"no client \"com.example.nope\" in the scenario","field":"client_id"}"#),
            (#"{"user":"alice","client_id":"com.example.app","scopes":["openid"]}"#,
             #"{"error":"unknown scope \"openid\" (expected name, email)","field":"scopes"}"#),
            (#"{"user":"alice","client_id":"com.example.app","scopes":"name"}"#, #"{"error":"expected an array of strings","field":"scopes"}"#),
            (#"{"user":"alice"}"#, #"{"error":"missing required field","field":"client_id"}"#),
            (#"{"user":"alice","client_id":"com.example.app","colour":"red"}"#,
             #"{"error":"unknown field (expected one of: user, client_id, scopes, nonce, hide_email, defect)","field":"colour"}"#),
        ]
        for (body, expected) in cases {
            let response = try await mock.postJSON("/__mock/sign-in", body)
            XCTAssertEqual(response.status, 400, body)
            XCTAssertEqual(response.text, expected, body)
        }
        // None of the refused requests created consent: the first real sign-in is still a first.
        let ok = try jsonObject(try await mock.nativeSignIn().body)
        XCTAssertEqual(ok["realUserStatus"], 2)
        XCTAssertEqual(ok["email"], "alice@example.com")
    }
}

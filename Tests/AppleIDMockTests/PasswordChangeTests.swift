import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /__mock/events` with `password-changed` (apple-behaviour.md §9 [D]), in memory through
/// the route table: the user's refresh tokens for every app die silently, a new sign-in works
/// and is a returning one, and the credential state stays authorized ([U]).
final class PasswordChangeTests: XCTestCase {
    private func changePassword(_ mock: any MockClient, _ user: String) async throws -> MockAnswer {
        try await mock.postJSON("/__mock/events", #"{"type":"password-changed","user":"\#(user)"}"#)
    }

    func testPasswordChange_KillsEveryRefreshTokenOfTheUser_NotifiesNoApp_AndANewSignInWorks() async throws {
        let mock = try frozenClient { $0.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple" }
        let aliceTokens = try await mock.webTokens()
        let bobTokens = try await mock.webTokens(user: "bob")
        let alices = try XCTUnwrap(aliceTokens["refresh_token"]?.stringValue)
        let bobs = try XCTUnwrap(bobTokens["refresh_token"]?.stringValue)
        try assertTokenAnswer(try await mock.refresh(alices), keys: ["access_token", "token_type", "expires_in", "id_token"])

        assertControl(try await changePassword(mock, "alice"), 202,
                      #"{"notification":null,"notifications":[],"type":"password-changed","user":"alice"}"#)
        assertAppleError(try await mock.refresh(alices), #"{"error":"invalid_grant"}"#)
        // Twin: another user's token lives on.
        try assertTokenAnswer(try await mock.refresh(bobs), keys: ["access_token", "token_type", "expires_in", "id_token"])

        // No notification, and the feed shows the change and no account event.
        assertControl(try await mock.get("/__mock/notifications?after=0"), 200, #"{"notifications":[]}"#)
        let feedAnswer = try await mock.get("/__mock/events?type=password-changed,account-event")
        let feed = try jsonObject(feedAnswer.body)
        let events = try XCTUnwrap(feed["events"]?.arrayValue?.compactMap(\.objectValue))
        XCTAssertEqual(events.map { $0["type"]?.stringValue }, ["password-changed"])
        let consents = try XCTUnwrap(events.first?["consents"]?.arrayValue?.compactMap(\.objectValue))
        XCTAssertEqual(consents.map { $0["group_id"]?.stringValue }, ["com.example.app"])

        // The consent lives on: the state reads authorized, a new sign-in is a returning one, and its tokens work.
        assertControl(try await credentialState(mock, user: "alice"), 200, #"{"state":"authorized"}"#)
        let fields = try await mock.headlessAuthorize()
        XCTAssertNil(fields["user"], "a returning sign-in shares no user JSON")
        let redeemed = try await mock.redeem(try XCTUnwrap(fields["code"]))
        let fresh = try XCTUnwrap(try jsonObject(redeemed.body)["refresh_token"]?.stringValue)
        try assertTokenAnswer(try await mock.refresh(fresh), keys: ["access_token", "token_type", "expires_in", "id_token"])
        assertAppleError(try await mock.refresh(alices), #"{"error":"invalid_grant"}"#)
    }

    func testPasswordChange_OfAUserWhoSignedInNowhere_ChangesNoToken_AndIsRefusedForAnUnknownOrDeletedUser() async throws {
        let mock = try frozenClient()
        assertControl(try await changePassword(mock, "bob"), 202,
                      #"{"notification":null,"notifications":[],"type":"password-changed","user":"bob"}"#)
        assertControl(try await changePassword(mock, "mallory"), 404, #"{"error":"no user \"mallory\"","field":"user"}"#)
        assertControl(try await mock.postJSON("/__mock/events", #"{"type":"password-changed","user":"alice","client_id":"com.example.app"}"#), 400,
                      #"{"error":"a password change is the user's, for every app: leave client_id out","field":"client_id"}"#)
        assertControl(try await mock.postJSON("/__mock/events", #"{"type":"password-changed"}"#), 400,
                      #"{"error":"missing required field","field":"user"}"#)
        _ = try await mock.nativeSignIn()
        assertStatus(try await mock.postJSON("/__mock/events", #"{"type":"account-delete","user":"alice","client_id":"com.example.app"}"#), 202)
        assertControl(try await changePassword(mock, "alice"), 409, #"{"error":"the Apple Account of \"alice\" was deleted","field":"user"}"#)
    }
}

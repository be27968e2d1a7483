@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// A Work & School (managed) Apple Account without an email (apple-behaviour.md §4 [D]), through
/// the routes users hit: no `email` in the `user` JSON, the id_token or the native credential,
/// each beside the twin of a user with an email.
final class ManagedAccountTests: XCTestCase {
    private func addManaged(_ mock: any MockClient, _ id: String) async throws {
        let added = try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","managed":true,"given_name":"Wes","family_name":"Work"}"#)
        XCTAssertEqual(added.status, 201, added.text)
        let user = try jsonObject(added.body)
        XCTAssertEqual(user["email"], .null)
        XCTAssertEqual(user["managed"], true)
    }

    func testManagedAccount_SignsInWithNoEmail_InTheUserJSONTheIDTokenAndTheTokenAnswer() async throws {
        let mock = try frozenClient()
        let id = freshUserID()
        try await addManaged(mock, id)
        for (user, email) in [(id, nil), ("alice", "alice@example.com")] {
            let fields = try await mock.headlessAuthorize(scope: "name email", user: user)
            let shared = try jsonObject(Array(try XCTUnwrap(fields["user"], user).utf8))
            XCTAssertEqual(shared["name"]?.objectValue?["firstName"], .string(user == id ? "Wes" : "Alice"))
            XCTAssertEqual(shared["email"]?.stringValue, email, user)
            let answer = try await mock.redeem(try XCTUnwrap(fields["code"]))
            XCTAssertEqual(answer.status, 200, answer.text)
            let token = try XCTUnwrap(try jsonObject(answer.body)["id_token"]?.stringValue)
            let claims = try jsonObject(Array(try await mock.verifiedPayload(token).utf8))
            XCTAssertEqual(claims["email"]?.stringValue, email, user)
            XCTAssertEqual(claims["email_verified"] != nil, email != nil, user)
        }
        // Native: the credential carries no email either, and email alone shares no user JSON on the web.
        let native = try jsonObject(try await mock.nativeSignIn(user: id).body)
        XCTAssertEqual(native["email"] ?? .null, .null)
        let second = freshUserID()
        try await addManaged(mock, second)
        let emailOnly = try await mock.headlessAuthorize(scope: "email", user: second)
        XCTAssertNil(emailOnly["user"])
        XCTAssertNotNil(emailOnly["code"])
    }

    func testManagedAccount_TakesNoEmailNorHideEmail_AtRunTimeAndInTheScenario() async throws {
        let mock = try frozenClient()
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(freshUserID())","managed":true,"email":"w@example.com"}"#), 400,
                      #"{"error":"expected none on a managed account (managed: a Work & School Apple Account without an email)","field":"email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(freshUserID())","managed":true,"hide_email":true}"#), 400,
                      #"{"error":"expected none on a managed account (managed: a Work & School Apple Account without an email)","field":"hide_email"}"#)
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(freshUserID())"}"#), 400, #"{"error":"missing required field","field":"email"}"#)

        var scenario = Scenario.default
        var wes = Scenario.User(id: "wes", email: "", givenName: "Wes", familyName: "Work")
        wes.managed = true
        scenario.users.append(wes)
        let loaded = try Scenario.load(json: Array(scenario.prettyJSON.utf8))
        XCTAssertEqual(loaded.users.last, wes)
        XCTAssertTrue(scenario.prettyJSON.contains(#""managed" : true"#) || scenario.prettyJSON.contains(#""managed": true"#))
        let withEmail = scenario.prettyJSON.replacingOccurrences(of: #""id": "wes","#, with: #""id": "wes", "email": "w@example.com","#)
        XCTAssertNotEqual(withEmail, scenario.prettyJSON)
        do {
            _ = try Scenario.load(json: Array(withEmail.utf8))
            XCTFail("a managed account with an email loaded")
        } catch {
            XCTAssertEqual(error.problems.map(\.description),
                           ["users[3].email: expected none on a managed account (managed: a Work & School Apple Account without an email)"])
        }
    }
}

import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `POST /__mock/reset` in memory: everything back to the scenario's start.
final class ResetRouteTests: XCTestCase {
    func testResetRoute_ReturnsEverythingToTheScenariosInitialState() async throws {
        let mock = try frozenClient()
        let id = try await addUser(mock)
        let authorized = try await mock.headlessAuthorize(user: id)["user"]
        XCTAssertNotNil(authorized)
        let pending = try await mock.webCode()
        let bobsTokens = try await mock.webTokens(user: "bob")
        let refreshToken = try XCTUnwrap(bobsTokens["refresh_token"]?.stringValue)
        assertStatus(try await mock.postJSON("/__mock/keys/rotate", ""), 200)
        assertStatus(try await moveClock(mock, #"{"advance":120}"#), 200)
        // Refused twin: reset takes no fields, and resets nothing when refused.
        let refused = try await mock.postJSON("/__mock/reset", #"{"keep":"users"}"#)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(try jsonObject(refused.body)["field"], "keep")
        let now = try await mock.now()
        XCTAssertEqual(now, frozenNow + 120)

        assertControl(try await mock.postJSON("/__mock/reset", ""), 200, #"{"active_kid":"W2ek7HdPaL","now":"2023-11-14T22:13:20Z"}"#)
        // Users added at runtime are gone.
        let listed = try await mock.get("/__mock/users")
        let users = try XCTUnwrap(try jsonObject(listed.body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol"])
        let signIn = try await mock.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"\#(id)"}"#)
        assertControl(signIn, 400, #"{"apple_error":"invalid_request","error":"no user \"\#(id)\" in the scenario","field":"user"}"#)
        // Codes and tokens from before are refused.
        assertAppleError(try await mock.redeem(pending), ControlFixture.expiredCode)
        assertAppleError(try await mock.refresh(refreshToken), #"{"error":"invalid_grant"}"#)
        // The clock and the keys are back.
        let fetched = try jsonObject(try await mock.get("/__mock/clock").body)["epoch"]
        XCTAssertEqual(fetched, .int(frozenNow))
        let kids = try await publishedKids(mock)
        XCTAssertEqual(kids, ControlFixture.initialKeys.sorted())
        let keyCount = try await keyList(mock)["keys"]?.arrayValue?.count
        XCTAssertEqual(keyCount, 3)
        // Consents are gone: alice authorizes for the first time again, and what is issued now works.
        let again = try await mock.headlessAuthorize()
        XCTAssertNotNil(again["user"])
        assertStatus(try await mock.redeem(try XCTUnwrap(again["code"])), 200)
    }
}

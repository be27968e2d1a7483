import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `omit_is_private_email` (apple-behaviour.md §4 [O]: Apple left the claim out for some relay
/// users in 2025): on, a relay user's id_token has `email` and no `is_private_email`; off (the
/// default), the claim is there.
final class PrivateEmailClaimTests: XCTestCase {
    func testOmitIsPrivateEmail_LeavesTheClaimOut_ForThatRelayUserOnly() async throws {
        let mock = try frozenClient()
        for omitted in [true, false] {
            let id = freshUserID()
            let flag = omitted ? #","omit_is_private_email":true"# : ""
            let added = try await mock.postJSON("/__mock/users", #"{"id":"\#(id)","email":"\#(id)@example.com","hide_email":true\#(flag)}"#)
            XCTAssertEqual(added.status, 201, added.text)
            XCTAssertEqual(try jsonObject(added.body)["omit_is_private_email"], omitted ? .bool(true) : nil)
            let fields = try await mock.headlessAuthorize(scope: "email", user: id)
            let answer = try await mock.redeem(try XCTUnwrap(fields["code"]))
            let token = try XCTUnwrap(try jsonObject(answer.body)["id_token"]?.stringValue)
            let claims = try jsonObject(Array(try await mock.verifiedPayload(token).utf8))
            XCTAssertTrue(matches(claims["email"]?.stringValue, relayPattern), "\(claims)")
            XCTAssertEqual(claims["is_private_email"] == nil, omitted, "\(claims)")
        }
        assertControl(try await mock.postJSON("/__mock/users", #"{"id":"\#(freshUserID())","email":"x@example.com","omit_is_private_email":"yes"}"#), 400,
                      #"{"error":"expected true or false","field":"omit_is_private_email"}"#)
    }
}

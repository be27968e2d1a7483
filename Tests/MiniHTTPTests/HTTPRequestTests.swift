import MiniHTTP
import XCTest

final class HTTPRequestTests: XCTestCase {
    func testInit_SplitsPathAndQuery_AtFirstQuestionMark() {
        let request = HTTPRequest(method: .get, target: "/a%20b?x=1?y")
        XCTAssertEqual(request.path, "/a%20b")
        XCTAssertEqual(request.query, "x=1?y")
        XCTAssertNil(HTTPRequest(method: .get, target: "/a").query)
        XCTAssertEqual(HTTPRequest(method: .get, target: "/a?").query, "")
    }

    func testWantsKeepAlive_FollowsVersionAndConnectionHeader() {
        XCTAssertTrue(HTTPRequest(method: .get, target: "/").wantsKeepAlive)
        XCTAssertFalse(HTTPRequest(method: .get, target: "/", headers: ["Connection": "Close"]).wantsKeepAlive)
        XCTAssertFalse(HTTPRequest(method: .get, target: "/", minorVersion: 0).wantsKeepAlive)
        XCTAssertTrue(HTTPRequest(method: .get, target: "/", minorVersion: 0, headers: ["Connection": "keep-alive"]).wantsKeepAlive)
        XCTAssertFalse(HTTPRequest(method: .get, target: "/", minorVersion: 0, headers: ["Connection": "keep-alive, close"]).wantsKeepAlive)
    }

    func testMediaType_DropsParametersAndLowercases() {
        XCTAssertEqual(HTTPRequest(method: .post, target: "/", headers: ["Content-Type": " Application/X-WWW-Form-Urlencoded ; charset=UTF-8"]).mediaType,
                       "application/x-www-form-urlencoded")
        XCTAssertNil(HTTPRequest(method: .post, target: "/").mediaType)
    }

    func testQueryParameters_DecodesOrThrows() throws {
        XCTAssertEqual(try HTTPRequest(method: .get, target: "/?a=1+2&b=%41").queryParameters(), HTTPForm([("a", "1 2"), ("b", "A")]))
        XCTAssertEqual(try HTTPRequest(method: .get, target: "/").queryParameters(), HTTPForm())
        XCTAssertThrowsError(try HTTPRequest(method: .get, target: "/?a=%4").queryParameters())
    }
}

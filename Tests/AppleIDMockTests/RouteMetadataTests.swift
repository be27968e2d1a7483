import AppleIDMock
import MiniHTTP
import XCTest

/// Every route the mock serves describes itself in `RouteTable.routes` (issue 21 item 1): a
/// summary and the fields it reads, what the OpenAPI drift test will compare against.
final class RouteMetadataTests: XCTestCase {
    func testEveryRoute_HasASummary_AndTheKidRoutesAreTemplates() async throws {
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        let routes = mock.routes.routes
        XCTAssertEqual(routes.count, 47)
        XCTAssertEqual(routes.filter(\.summary.isEmpty).map { "\($0.method) \($0.template)" }, [], "routes without a summary")
        XCTAssertTrue(routes.contains { $0.method == .post && $0.template == "/__mock/keys/{kid}/activate" })
        XCTAssertTrue(routes.contains { $0.method == .delete && $0.template == "/__mock/keys/{kid}" })
        // Where discovery-issuer-flip redirects: account.apple.com's document, served by the mock.
        XCTAssertTrue(routes.contains { $0.method == .get && $0.template == "/account.apple.com/.well-known/openid-configuration" })
        // The dashboard: its page, assets and the redirect to it are routes like any other, not a fallback.
        for path in ["/__mock", "/__mock/", "/__mock/dashboard", "/__mock/dashboard.js", "/__mock/dashboard.css"] {
            XCTAssertTrue(routes.contains { $0.method == .get && $0.template == path }, path)
        }
        XCTAssertEqual(routes.first { $0.method == .get && $0.template == "/__mock/dashboard" }?.reads, ["route", "client"])
        XCTAssertEqual(routes.first { $0.method == .post && $0.template == "/__mock/events" }?.reads, ["type", "user", "client_id"])
        // The twin: a route the mock does not serve is not listed.
        XCTAssertFalse(routes.contains { $0.template == "/__mock/keys/{kid}/retire" })
    }

    func testAControlRouteRefusesAFieldItsMetadataDoesNotList() async throws {
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        let reads = try XCTUnwrap(mock.routes.routes.first { $0.method == .post && $0.template == "/__mock/users" }?.reads)
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Host", "127.0.0.1")
        var body = "{" + reads.map { name in
            switch name {
            case "hide_email", "managed", "omit_is_private_email": "\"\(name)\":false"
            case "real_user_status": "\"\(name)\":2"
            case "email": "\"\(name)\":\"erin@example.com\""
            case "relay_domain": "\"\(name)\":\"privaterelay.appleid.com\""
            default: "\"\(name)\":\"erin\""
            }
        }.joined(separator: ",") + "}"
        let accepted = await mock.respond(.post, "/__mock/users", headers: headers, body: Array(body.utf8))
        XCTAssertEqual(accepted.status.code, 201)
        body = #"{"id":"fred","email":"fred@example.com","given_name":"F","family_name":"F","shoe_size":44}"#
        let refused = await mock.respond(.post, "/__mock/users", headers: headers, body: Array(body.utf8))
        XCTAssertEqual(refused.status.code, 400)
    }
}

import MiniHTTP
import XCTest

final class RouteTableTests: XCTestCase {
    private func table(notFound: HTTPHandler? = nil) -> RouteTable {
        var router = Router()
        router.add(.get, "/doc", immediate: { _ in .text("get") })
        router.add(.post, "/doc", immediate: { _ in .text("post") })
        router.add(.post, "/form", deferred: { _ in .text("form") })
        router.add(.get, "/own-head", immediate: { _ in .text("get") })
        router.add(.head, "/own-head", immediate: { _ in .text("head") })
        router.add(.get, "/teapot", immediate: { _ in throw TeapotError() })
        router.add(.get, "/crash", deferred: { _ in throw UnexpectedError() })
        if let notFound { router.setNotFound(notFound) }
        return router.build()
    }

    private func respond(_ table: RouteTable, _ method: HTTPMethod, _ target: String) async -> (Int, String, String?) {
        let response = await table.respond(to: HTTPRequest(method: method, target: target, headers: ["Host": "x"]))
        return (response.status.code, String(decoding: response.body, as: UTF8.self), response.headers["Allow"])
    }

    private func assertResponse(_ actual: (Int, String, String?), _ expected: (Int, String, String?), file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(actual.0, expected.0, "status", file: file, line: line)
        XCTAssertEqual(actual.1, expected.1, "body", file: file, line: line)
        XCTAssertEqual(actual.2, expected.2, "Allow", file: file, line: line)
    }

    func testRespond_RunsHandlerForMethodAndPath_IgnoringQuery() async {
        let table = table()
        assertResponse(await respond(table, .get, "/doc?x=1"), (200, "get", nil))
        assertResponse(await respond(table, .post, "/doc"), (200, "post", nil))
        assertResponse(await respond(table, .post, "/form"), (200, "form", nil))
    }

    func testRespond_HeadFallsBackToGet_UnlessHeadIsRouted() async {
        let table = table()
        assertResponse(await respond(table, .head, "/doc"), (200, "get", nil))
        assertResponse(await respond(table, .head, "/own-head"), (200, "head", nil))
    }

    func testRespond_Answers405WithSortedAllow_WhenMethodNotRouted() async {
        let table = table()
        assertResponse(await respond(table, .delete, "/doc"), (405, "405 Method Not Allowed\n", "GET, HEAD, POST"))
        assertResponse(await respond(table, .get, "/form"), (405, "405 Method Not Allowed\n", "POST"))
        assertResponse(await respond(table, .put, "/own-head"), (405, "405 Method Not Allowed\n", "GET, HEAD"))
        // Methods are case-sensitive (RFC 9110 §9.1).
        assertResponse(await respond(table, HTTPMethod(rawValue: "get"), "/doc"), (405, "405 Method Not Allowed\n", "GET, HEAD, POST"))
    }

    func testRespond_Answers404_WhenPathUnknownOrNotExact() async {
        let table = table()
        for target in ["/nope", "/doc/", "/DOC", "/doc%2F", ""] {
            assertResponse(await respond(table, .get, target), (404, "404 Not Found\n", nil))
        }
    }

    func testRespond_UsesFallback_WhenNotFoundHandlerSet() async {
        let table = table(notFound: .immediate { request in .text("no \(request.path)", status: .notFound) })
        assertResponse(await respond(table, .get, "/nope?q"), (404, "no /nope", nil))
        assertResponse(await respond(table, .delete, "/doc"), (405, "405 Method Not Allowed\n", "GET, HEAD, POST"))
    }

    func testRespond_SendsErrorsOwnResponse_WhenHandlerThrowsHTTPResponseError() async {
        assertResponse(await respond(table(), .get, "/teapot"), (418, "short and stout\n", nil))
    }

    func testRespond_Answers500_WhenHandlerThrowsOtherError() async {
        assertResponse(await respond(table(), .get, "/crash"), (500, "500 Internal Server Error\n", nil))
    }

    func testResolve_ReportsWhatItFound() {
        let table = table()
        guard case .handler = table.resolve(.get, "/doc") else { return XCTFail("GET /doc") }
        guard case .methodNotAllowed(let allow) = table.resolve(.patch, "/doc") else { return XCTFail("PATCH /doc") }
        XCTAssertEqual(allow, [.get, .head, .post])
        guard case .notFound(nil) = table.resolve(.get, "/x") else { return XCTFail("GET /x") }
        guard case .notFound(.some) = self.table(notFound: .immediate { _ in .text("") }).resolve(.get, "/x") else { return XCTFail("fallback") }
        XCTAssertEqual(table.paths, ["/crash", "/doc", "/form", "/own-head", "/teapot"])
    }

    func testRouter_LaterRouteReplacesEarlier_ForSameMethodAndPath() async {
        var router = Router()
        router.add(.get, "/a", immediate: { _ in .text("first") })
        router.add(.get, "/a", immediate: { _ in .text("second") })
        assertResponse(await respond(router.build(), .get, "/a"), (200, "second", nil))
    }
}

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

    func testRespond_UsesPrefixFallbacks_LongestPrefixFirst_OtherPathsKeepTheDefaults() async {
        var router = Router()
        router.add(.get, "/api/doc", immediate: { _ in .text("doc") })
        router.add(.post, "/api/v2/doc", immediate: { _ in .text("v2 doc") })
        router.add(.get, "/doc", immediate: { _ in .text("plain doc") })
        func fallbacks(_ name: String) -> (HTTPHandler, @Sendable ([HTTPMethod]) -> HTTPHandler) {
            (.immediate { request in .text("\(name): no \(request.path)", status: .notFound) },
             { allow in .immediate { _ in
                var response = HTTPResponse.text("\(name): only \(allow.map(\.rawValue).joined(separator: " "))", status: .methodNotAllowed)
                response.headers.add("Allow", allow.map(\.rawValue).joined(separator: ", "))
                return response
             } })
        }
        let (api, apiMethods) = fallbacks("api")
        let (v2, v2Methods) = fallbacks("v2")
        router.setFallbacks(under: "/api/", notFound: api, methodNotAllowed: apiMethods)
        router.setFallbacks(under: "/api/v2/", notFound: v2, methodNotAllowed: v2Methods)
        let table = router.build()
        assertResponse(await respond(table, .get, "/api/nope?x"), (404, "api: no /api/nope", nil))
        assertResponse(await respond(table, .delete, "/api/doc"), (405, "api: only GET HEAD", "GET, HEAD"))
        assertResponse(await respond(table, .get, "/api/v2/nope"), (404, "v2: no /api/v2/nope", nil))
        assertResponse(await respond(table, .get, "/api/v2/doc"), (405, "v2: only POST", "POST"))
        guard case .methodNotAllowed([.post], .some) = table.resolve(.get, "/api/v2/doc") else { return XCTFail("GET /api/v2/doc") }
        // Twins: routed methods still answer; outside the prefixes, the plain 404 and 405.
        assertResponse(await respond(table, .head, "/api/doc"), (200, "doc", nil))
        assertResponse(await respond(table, .post, "/api/v2/doc"), (200, "v2 doc", nil))
        assertResponse(await respond(table, .get, "/api"), (404, "404 Not Found\n", nil))
        assertResponse(await respond(table, .post, "/doc"), (405, "405 Method Not Allowed\n", "GET, HEAD"))
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
        guard case .methodNotAllowed(let allow, nil) = table.resolve(.patch, "/doc") else { return XCTFail("PATCH /doc") }
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

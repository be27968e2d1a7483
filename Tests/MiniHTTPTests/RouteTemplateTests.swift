import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Path templates (`{name}` segments) and the metadata `RouteTable.routes` lists.
final class RouteTemplateTests: XCTestCase {
    /// Echoes the route that answered and the `kid` it was given.
    private static func echo(_ name: String) -> HTTPHandler {
        .immediate { request in .text("\(name) \(request.pathParameters["kid"] ?? "-")") }
    }

    private func table() -> RouteTable {
        var router = Router()
        router.add(.post, "/__mock/keys/{kid}/activate", Self.echo("activate"), summary: "Makes a key sign.", reads: ["kid"])
        router.add(.delete, "/__mock/keys/{kid}", Self.echo("retire"))
        router.add(.post, "/__mock/keys/rotate", Self.echo("rotate"), summary: "Rotates.")
        router.add(.get, "/__mock/keys", Self.echo("list"))
        return router.build()
    }

    private func respond(_ table: RouteTable, _ method: HTTPMethod, _ target: String) async -> (Int, String, String?) {
        let response = await table.respond(to: HTTPRequest(method: method, target: target, headers: ["Host": "x"]))
        return (response.status.code, String(decoding: response.body, as: UTF8.self), response.headers["Allow"])
    }

    func testTemplate_MatchesAndPassesItsParameter() async {
        let table = table()
        let activated = await respond(table, .post, "/__mock/keys/Ymq4vB9xTz/activate?x=1")
        XCTAssertEqual(activated.0, 200)
        XCTAssertEqual(activated.1, "activate Ymq4vB9xTz")
        let retired = await respond(table, .delete, "/__mock/keys/a%20b")
        XCTAssertEqual(retired.1, "retire a%20b")
    }

    func testTemplate_NeverShadowsAnExactRoute() async {
        let table = table()
        let rotated = await respond(table, .post, "/__mock/keys/rotate")
        XCTAssertEqual(rotated.1, "rotate -")
        // The exact path's own methods decide: DELETE is not taken by `{kid}`.
        let deleted = await respond(table, .delete, "/__mock/keys/rotate")
        XCTAssertEqual(deleted.0, 405)
        XCTAssertEqual(deleted.2, "POST")
    }

    func testTemplate_DoesNotMatch_WhenSegmentsDifferOrAreEmpty() async {
        let table = table()
        for target in ["/__mock/keys/a/b/c", "/__mock/keys//activate", "/__mock/keys/", "/__mock/keys/a/deactivate", "/__mock/keys/a/activate/"] {
            let answer = await respond(table, .post, target)
            XCTAssertEqual(answer.0, 404, target)
        }
    }

    func testTemplate_Answers405WithAllow_WhenMethodNotRouted() async {
        let answer = await respond(table(), .get, "/__mock/keys/k1/activate")
        XCTAssertEqual(answer.0, 405)
        XCTAssertEqual(answer.2, "POST")
    }

    func testTemplate_UsesPrefixMethodNotAllowedFallback() async {
        var router = Router()
        router.add(.delete, "/api/{id}", Self.echo("retire"))
        router.setFallbacks(under: "/api/", notFound: .immediate { _ in .text("api 404", status: .notFound) },
                            methodNotAllowed: { allow in .immediate { _ in .text("api 405 \(allow.map(\.rawValue))", status: .methodNotAllowed) } })
        let table = router.build()
        let wrongMethod = await respond(table, .get, "/api/7")
        XCTAssertEqual(wrongMethod.1, #"api 405 ["DELETE"]"#)
        let unknown = await respond(table, .get, "/api/7/8")
        XCTAssertEqual(unknown.1, "api 404")
    }

    func testRoutes_ListsEveryRouteWithItsMetadata_Sorted() {
        XCTAssertEqual(table().routes, [
            RouteInfo(method: .get, template: "/__mock/keys"),
            RouteInfo(method: .post, template: "/__mock/keys/rotate", summary: "Rotates."),
            RouteInfo(method: .delete, template: "/__mock/keys/{kid}"),
            RouteInfo(method: .post, template: "/__mock/keys/{kid}/activate", summary: "Makes a key sign.", reads: ["kid"]),
        ])
        XCTAssertEqual(table().paths, ["/__mock/keys", "/__mock/keys/rotate", "/__mock/keys/{kid}", "/__mock/keys/{kid}/activate"])
    }

    func testTemplate_PassesParameter_ToADeferredHandlerOnALiveServer() throws {
        var router = Router()
        router.add(.post, "/keys/{kid}/activate", deferred: { request in .text(request.pathParameters["kid"] ?? "-") })
        let server = try HTTPServer.start(configuration: ServerFixture.relaxed, routes: router.build())
        defer { server.stop() }
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("POST", "/keys/k9/activate").rawText, ServerFixture.okText("k9"))
    }
}

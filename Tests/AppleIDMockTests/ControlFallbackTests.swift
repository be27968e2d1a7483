import AppleIDMock
import XCTest

/// What no route takes, in memory: under `/__mock/` the control API answers 404 and 405 in its
/// own JSON, behind its guard; Apple's paths keep MiniHTTP's plain answers. (How MiniHTTP frames
/// them is MiniHTTP's suites' business.)
final class ControlFallbackTests: XCTestCase {
    private func send(_ mock: any MockClient, _ method: String, _ target: String, _ headers: [(String, String)] = []) async throws -> MockAnswer {
        try await mock.send(method, target, headers: headers)
    }

    func testControlAPI_Answers404InItsJSON_ForAnUnknownPath() async throws {
        let mock = try frozenClient()
        let body = #"{"error":"no control route at /__mock/nope","field":null}"#
        assertAnswer(try await send(mock, "GET", "/__mock/nope?x=1"), 404, headers: ["Content-Type: application/json"], body: body)
        // Under the per-key prefix too, where a path is no key route.
        let keyRouteBody = try await send(mock, "GET", "/__mock/keys/Ymq4vB9xTz/deactivate").text
        XCTAssertEqual(keyRouteBody,
                       #"{"error":"no control route at /__mock/keys/Ymq4vB9xTz/deactivate","field":null}"#)
        // Twin: a routed control path answers.
        assertStatus(try await send(mock, "GET", "/__mock/clock"), 200)
    }

    func testControlAPI_Answers405InItsJSONWithAllow_ForAKnownPathWithAnotherMethod() async throws {
        let mock = try frozenClient()
        let body = #"{"error":"method not allowed (allowed: GET, HEAD, POST)","field":null}"#
        assertAnswer(try await send(mock, "DELETE", "/__mock/clock"), 405, headers: ["Content-Type: application/json", "Allow: GET, HEAD, POST"], body: body)
        // The per-key routes answer theirs from the same place.
        let keyRoute = try await send(mock, "GET", "/__mock/keys/Ymq4vB9xTz")
        XCTAssertEqual(keyRoute.text, #"{"error":"method not allowed (allowed: DELETE)","field":null}"#)
        XCTAssertEqual(keyRoute.headers["Allow"], "DELETE")
        let health = try await send(mock, "POST", "/__mock/health")
        XCTAssertEqual(health.status, 405)
        XCTAssertEqual(health.text, #"{"error":"method not allowed (allowed: GET, HEAD)","field":null}"#)
    }

    func testControlAPI_GuardRefusesFirst_On404And405() async throws {
        let mock = try frozenClient { $0.controlToken = "fallback-token-0123456789" }
        let crossSite = [("Origin", "https://evil.example")]
        let refused = #"{"error":"cross-origin requests to the control API are refused","field":"Origin"}"#
        for (method, target) in [("GET", "/__mock/nope"), ("DELETE", "/__mock/clock")] {
            let response = try await send(mock, method, target, crossSite)
            XCTAssertEqual(response.status, 403, "\(method) \(target)")
            XCTAssertEqual(response.text, refused, "\(method) \(target)")
        }
        assertStatus(try await send(mock, "DELETE", "/__mock/clock"), 401)
        assertStatus(try await send(mock, "GET", "/__mock/nope"), 401)
        // Twins: with the token, the control API's own 405 and 404.
        let bearer = [("Authorization", "Bearer fallback-token-0123456789")]
        assertStatus(try await send(mock, "DELETE", "/__mock/clock", bearer), 405)
        assertStatus(try await send(mock, "GET", "/__mock/nope", bearer), 404)
    }

    func testApplePaths_KeepMiniHTTPsPlain404And405() async throws {
        let mock = try frozenClient()
        // (`/__mock` itself redirects to the dashboard: DashboardTests.)
        for target in ["/auth/nope", "/__mockery", "/__moc"] {
            assertAnswer(try await send(mock, "GET", target), 404, headers: ["Content-Type: text/plain; charset=utf-8"], body: "404 Not Found\n", target)
        }
        assertAnswer(try await send(mock, "DELETE", "/auth/keys"), 405, headers: ["Content-Type: text/plain; charset=utf-8", "Allow: GET, HEAD"],
                     body: "405 Method Not Allowed\n")
        assertAnswer(try await send(mock, "GET", "/auth/token"), 405, headers: ["Content-Type: text/plain; charset=utf-8", "Allow: POST"],
                     body: "405 Method Not Allowed\n")
        // A cross-site request to Apple's paths is not the guard's business.
        assertStatus(try await send(mock, "GET", "/auth/nope", [("Origin", "https://evil.example")]), 404)
    }
}

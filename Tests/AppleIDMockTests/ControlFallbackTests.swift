import AppleIDMock
import MiniHTTPTesting
import XCTest

/// What no route takes, on a live mock over raw sockets: under `/__mock/` the control API answers
/// 404 and 405 in its own JSON, behind its guard; Apple's paths keep MiniHTTP's plain answers.
final class ControlFallbackTests: XCTestCase {
    private func send(_ server: AppleIDMockServer, _ method: String, _ target: String, _ headers: [(String, String)] = []) throws -> RawHTTPResponse {
        try RawHTTPClient(port: server.port).roundTrip(method, target, headers: headers)
    }

    func testControlAPI_Answers404InItsJSON_ForAnUnknownPath() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let body = #"{"error":"no control route at /__mock/nope","field":null}"#
        XCTAssertEqual(try send(server, "GET", "/__mock/nope?x=1").rawText,
                       "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        // Under the per-key prefix too, where a path is no key route.
        XCTAssertEqual(try send(server, "GET", "/__mock/keys/Ymq4vB9xTz/deactivate").text,
                       #"{"error":"no control route at /__mock/keys/Ymq4vB9xTz/deactivate","field":null}"#)
        // Twin: a routed control path answers.
        XCTAssertEqual(try send(server, "GET", "/__mock/clock").status, 200)
    }

    func testControlAPI_Answers405InItsJSONWithAllow_ForAKnownPathWithAnotherMethod() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let body = #"{"error":"method not allowed (allowed: GET, HEAD, POST)","field":null}"#
        XCTAssertEqual(try send(server, "DELETE", "/__mock/clock").rawText,
                       "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nAllow: GET, HEAD, POST\r\n"
                       + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
        // The per-key routes answer theirs from the same place.
        let keyRoute = try send(server, "GET", "/__mock/keys/Ymq4vB9xTz")
        XCTAssertEqual(keyRoute.text, #"{"error":"method not allowed (allowed: DELETE)","field":null}"#)
        XCTAssertEqual(keyRoute.headers["Allow"], "DELETE")
        let health = try send(server, "POST", "/__mock/health")
        XCTAssertEqual(health.status, 405)
        XCTAssertEqual(health.text, #"{"error":"method not allowed (allowed: GET, HEAD)","field":null}"#)
    }

    func testControlAPI_GuardRefusesFirst_On404And405() throws {
        let server = try startFrozenMock { $0.controlToken = "fallback-token-0123456789" }
        defer { server.stop() }
        let crossSite = [("Origin", "https://evil.example")]
        let refused = #"{"error":"cross-origin requests to the control API are refused","field":"Origin"}"#
        for (method, target) in [("GET", "/__mock/nope"), ("DELETE", "/__mock/clock")] {
            let response = try send(server, method, target, crossSite)
            XCTAssertEqual(response.status, 403, "\(method) \(target)")
            XCTAssertEqual(response.text, refused, "\(method) \(target)")
        }
        XCTAssertEqual(try send(server, "DELETE", "/__mock/clock").status, 401)
        XCTAssertEqual(try send(server, "GET", "/__mock/nope").status, 401)
        // Twins: with the token, the control API's own 405 and 404.
        let bearer = [("Authorization", "Bearer fallback-token-0123456789")]
        XCTAssertEqual(try send(server, "DELETE", "/__mock/clock", bearer).status, 405)
        XCTAssertEqual(try send(server, "GET", "/__mock/nope", bearer).status, 404)
    }

    func testApplePaths_KeepMiniHTTPsPlain404And405() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        // (`/__mock` itself redirects to the dashboard: DashboardTests.)
        for target in ["/auth/nope", "/__mockery", "/__moc"] {
            XCTAssertEqual(try send(server, "GET", target).rawText,
                           "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 14\r\n\r\n404 Not Found\n", target)
        }
        XCTAssertEqual(try send(server, "DELETE", "/auth/keys").rawText,
                       "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nAllow: GET, HEAD\r\nContent-Length: 23\r\n\r\n405 Method Not Allowed\n")
        XCTAssertEqual(try send(server, "GET", "/auth/token").rawText,
                       "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain; charset=utf-8\r\nAllow: POST\r\nContent-Length: 23\r\n\r\n405 Method Not Allowed\n")
        // A cross-site request to Apple's paths is not the guard's business.
        XCTAssertEqual(try send(server, "GET", "/auth/nope", [("Origin", "https://evil.example")]).status, 404)
    }
}

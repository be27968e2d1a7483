import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `--control-token` (probe finding N10): with a token, every control route but the health check
/// needs `Authorization: Bearer <token>`; Apple's routes stay open. Over raw sockets, exact bodies.
final class ControlTokenTests: XCTestCase {
    private static let token = "s3cret-token-for-tests_0123456789"
    private static let refusal = #"{"error":"the control API needs Authorization: Bearer <the --control-token the mock was started with>","field":"Authorization"}"#

    private func send(_ server: AppleIDMockServer, _ method: String, _ path: String, authorization: String? = nil,
                      body: String? = nil) throws -> RawHTTPResponse {
        var headers: [(String, String)] = []
        if let authorization { headers.append(("Authorization", authorization)) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try server.client().roundTrip(method, path, headers: headers, body: Array((body ?? "").utf8))
    }

    func testControlToken_RefusesControlRoutesWithoutTheBearer_AndAcceptsThemWithIt() throws {
        let server = try startMock { $0.controlToken = Self.token }
        defer { server.stop() }
        for (method, path, body) in [("GET", "/__mock/clock", nil), ("POST", "/__mock/reset", nil), ("GET", "/__mock/users", nil),
                                     ("POST", "/__mock/keys/rotate", "{}"), ("POST", "/__mock/keys/W2ek7HdPaL/activate", nil),
                                     ("GET", "/__mock/notifications", nil)] {
            let refused = try send(server, method, path, body: body)
            XCTAssertEqual(refused.status, 401, "\(method) \(path)")
            XCTAssertEqual(refused.headers["WWW-Authenticate"], #"Bearer realm="appleid-mock""#)
            XCTAssertEqual(refused.text, Self.refusal, "\(method) \(path)")
        }
        for wrong in ["Bearer s3cret-token-for-tests_012345678X", "Bearer s3cret-token-for-tests_012345678", "Basic \(Self.token)",
                      "Bearer  \(Self.token)", "Bearer\t\(Self.token)", Self.token, "Bearer \(Self.token)x"] {
            XCTAssertEqual(try send(server, "GET", "/__mock/clock", authorization: wrong).status, 401, wrong)
        }
        XCTAssertEqual(try send(server, "GET", "/__mock/clock", authorization: "Bearer \(Self.token)").status, 200)
        XCTAssertEqual(try send(server, "GET", "/__mock/clock", authorization: "bearer \(Self.token)").status, 200)
        XCTAssertEqual(try send(server, "POST", "/__mock/keys/W2ek7HdPaL/activate", authorization: "Bearer \(Self.token)").status, 200)
    }

    func testControlToken_LeavesHealthAndApplesRoutesOpen() throws {
        let server = try startMock { $0.controlToken = Self.token }
        defer { server.stop() }
        XCTAssertEqual(try send(server, "GET", "/__mock/health").status, 200)
        XCTAssertEqual(try send(server, "GET", "/auth/keys").status, 200)
        XCTAssertEqual(try send(server, "GET", "/.well-known/openid-configuration").status, 200)
        let token = try send(server, "POST", "/auth/token")
        XCTAssertEqual(token.status, 400)
        XCTAssertTrue(token.text.hasPrefix(#"{"error":"#), token.text)
    }

    func testControlGuard_WithoutAToken_AnswersControlRoutesAsBefore() throws {
        let server = try startMock()
        defer { server.stop() }
        XCTAssertEqual(try send(server, "GET", "/__mock/clock").status, 200)
        XCTAssertEqual(try send(server, "GET", "/__mock/clock", authorization: "Bearer anything-at-all-0123").status, 200)
    }

    func testStart_WarnsOnceWhenListeningBeyondLoopbackWithoutAToken_AndNotWithOne() throws {
        for token in [nil, Self.token] {
            let lines = LockedLines()
            let server = try startMock { configuration in
                configuration.host = "0.0.0.0"
                configuration.controlToken = token
                configuration.log = { lines.append($0) }
            }
            server.stop()
            let warnings = lines.all.filter { $0.contains("beyond this machine") }
            if token == nil {
                XCTAssertEqual(warnings, ["listening on 0.0.0.0, beyond this machine, with no --control-token: anyone who can reach the port "
                                          + "can drive the mock through /__mock (mint tokens for any user, reset, move the clock, retire keys)"])
            } else {
                XCTAssertEqual(warnings, [])
            }
        }
    }
}

/// Log lines collected from any thread.
private final class LockedLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var all: [String] { lines.withLock { $0 } }
}

import AppleIDMock
import JOSE
import MiniHTTP
import Synchronization
import XCTest

/// `--control-token` (probe finding N10): with a token, every control route but the health check
/// needs `Authorization: Bearer <token>`; Apple's routes stay open. In memory, exact bodies.
final class ControlTokenTests: XCTestCase {
    private static let token = "s3cret-token-for-tests_0123456789"
    private static let refusal = #"{"error":"the control API needs Authorization: Bearer <the --control-token the mock was started with>","field":"Authorization"}"#

    private func send(_ mock: any MockClient, _ method: String, _ path: String, authorization: String? = nil,
                      body: String? = nil) async throws -> MockAnswer {
        var headers: [(String, String)] = []
        if let authorization { headers.append(("Authorization", authorization)) }
        if body != nil { headers.append(("Content-Type", "application/json")) }
        return try await mock.send(method, path, headers: headers, body: Array((body ?? "").utf8))
    }

    func testControlToken_RefusesControlRoutesWithoutTheBearer_AndAcceptsThemWithIt() async throws {
        let mock = try startClient { $0.controlToken = Self.token }
        for (method, path, body) in [("GET", "/__mock/clock", nil), ("POST", "/__mock/reset", nil), ("GET", "/__mock/users", nil),
                                     ("POST", "/__mock/keys/rotate", "{}"), ("POST", "/__mock/keys/W2ek7HdPaL/activate", nil),
                                     ("GET", "/__mock/notifications", nil)] {
            let refused = try await send(mock, method, path, body: body)
            XCTAssertEqual(refused.status, 401, "\(method) \(path)")
            XCTAssertEqual(refused.headers["WWW-Authenticate"], #"Bearer realm="appleid-mock""#)
            XCTAssertEqual(refused.text, Self.refusal, "\(method) \(path)")
        }
        for wrong in ["Bearer s3cret-token-for-tests_012345678X", "Bearer s3cret-token-for-tests_012345678", "Basic \(Self.token)",
                      "Bearer  \(Self.token)", "Bearer\t\(Self.token)", Self.token, "Bearer \(Self.token)x"] {
            assertStatus(try await send(mock, "GET", "/__mock/clock", authorization: wrong), 401, wrong)
        }
        assertStatus(try await send(mock, "GET", "/__mock/clock", authorization: "Bearer \(Self.token)"), 200)
        assertStatus(try await send(mock, "GET", "/__mock/clock", authorization: "bearer \(Self.token)"), 200)
        assertStatus(try await send(mock, "POST", "/__mock/keys/W2ek7HdPaL/activate", authorization: "Bearer \(Self.token)"), 200)
    }

    func testControlToken_LeavesHealthAndApplesRoutesOpen() async throws {
        let mock = try startClient { $0.controlToken = Self.token }
        assertStatus(try await send(mock, "GET", "/__mock/health"), 200)
        assertStatus(try await send(mock, "GET", "/auth/keys"), 200)
        assertStatus(try await send(mock, "GET", "/.well-known/openid-configuration"), 200)
        let token = try await send(mock, "POST", "/auth/token")
        XCTAssertEqual(token.status, 400)
        XCTAssertTrue(token.text.hasPrefix(#"{"error":"#), token.text)
    }

    func testControlGuard_WithoutAToken_AnswersControlRoutesAsBefore() async throws {
        let mock = try startClient()
        assertStatus(try await send(mock, "GET", "/__mock/clock"), 200)
        assertStatus(try await send(mock, "GET", "/__mock/clock", authorization: "Bearer anything-at-all-0123"), 200)
    }

    // Live: the warning is about binding beyond loopback. In a container every interface is how
    // a port is published, and only the engine knows whether that stays on loopback (newcomer
    // P8): there the warning says what to do instead. A token quiets both.
    func testStart_WarnsOnceWhenListeningBeyondLoopbackWithoutAToken_AndNotWithOne_InAContainerSayingWhatToDo() throws {
        for inContainer in [false, true] {
            for token in [nil, Self.token] {
                let lines = LockedLines()
                let server = try startMock { configuration in
                    configuration.host = "0.0.0.0"
                    configuration.controlToken = token
                    configuration.inContainer = inContainer
                    configuration.log = { lines.append($0) }
                }
                let port = server.port
                server.stop()
                let warnings = lines.all.filter { $0.contains("/__mock") }
                let expected = !inContainer
                    ? "listening on 0.0.0.0, beyond this machine, with no --control-token: anyone who can reach the port "
                        + "can drive the mock through /__mock (mint tokens for any user, reset, move the clock, retire keys)"
                    : "listening on 0.0.0.0 in a container, with no --control-token: whoever reaches the port it is published on "
                        + "can drive the mock through /__mock; publish it on loopback only (-p 127.0.0.1:\(port):\(port)) "
                        + "or set APPLEID_MOCK_CONTROL_TOKEN"
                XCTAssertEqual(warnings, token == nil ? [expected] : [], "in a container: \(inContainer)")
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

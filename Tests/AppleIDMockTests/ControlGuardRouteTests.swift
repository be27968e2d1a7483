import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// The control guard over the clock, keys, users, reset and credential-state routes, in memory.
final class ControlGuardRouteTests: XCTestCase {
    func testControlGuard_RefusesAForeignHost_OnEveryNewRoute_AndChangesNothing() async throws {
        let mock = try frozenClient()
        let routes: [(String, String, String?)] = [
            ("GET", "/__mock/clock", nil), ("POST", "/__mock/clock", #"{"advance":60}"#),
            ("GET", "/__mock/keys", nil), ("POST", "/__mock/keys", #"{"kid":"Custom1"}"#), ("POST", "/__mock/keys/rotate", nil),
            ("POST", "/__mock/keys/Ymq4vB9xTz/activate", nil), ("DELETE", "/__mock/keys/r8TcNf3QsJ", nil),
            ("GET", "/__mock/users", nil), ("POST", "/__mock/users", #"{"id":"mallory","email":"m@example.com"}"#),
            ("POST", "/__mock/reset", nil), ("GET", "/__mock/credential-state?user=alice&client_id=com.example.app", nil),
        ]
        assertStatus(try await moveClock(mock, #"{"advance":1}"#), 200)
        for (method, path, body) in routes {
            assertControl(try await controlRequest(mock, method, path, host: "attacker.example", body: body), 403,
                          #"{"error":"Host \"attacker.example\" is not allowed for the control API (allow a name with --allowed-host)","field":"Host"}"#)
        }
        let now = try await mock.now()
        XCTAssertEqual(now, frozenNow + 1, "neither moved nor reset")
        let keyCount = try await keyList(mock)["keys"]?.arrayValue?.count
        XCTAssertEqual(keyCount, 3)
        let keyState = try await keyState(mock, "r8TcNf3QsJ")
        XCTAssertEqual(keyState, "published")
        let fetched = try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]
        XCTAssertEqual(fetched, "W2ek7HdPaL")
        let listed = try await mock.get("/__mock/users")
        let users = try XCTUnwrap(try jsonObject(listed.body)["users"]?.arrayValue)
        XCTAssertEqual(users.map { $0.objectValue?["id"]?.stringValue }, ["alice", "bob", "carol"], "mallory was not added")
        // A cross-site Origin and a text/plain body are refused too.
        let crossSite = try await mock.send("POST", "/__mock/reset", headers: [("Origin", "https://attacker.example")])
        assertControl(crossSite, 403, #"{"error":"cross-origin requests to the control API are refused","field":"Origin"}"#)
        let plain = try await mock.send("POST", "/__mock/clock", headers: [("Content-Type", "text/plain")], body: Array(#"{"advance":60}"#.utf8))
        assertControl(plain, 415, #"{"error":"expected Content-Type: application/json","field":"Content-Type"}"#)
        let afterOriginAndType = try await mock.now()
        XCTAssertEqual(afterOriginAndType, frozenNow + 1)
        // Twins: the same requests under an IP literal are served.
        let port = 8080
        assertStatus(try await controlRequest(mock, "GET", "/__mock/clock", host: "127.0.0.1:\(port)"), 200)
        assertStatus(try await controlRequest(mock, "POST", "/__mock/clock", host: "127.0.0.1:\(port)", body: #"{"advance":60}"#), 200)
        assertStatus(try await controlRequest(mock, "DELETE", "/__mock/keys/r8TcNf3QsJ", host: "127.0.0.1:\(port)"), 200)
        assertStatus(try await controlRequest(mock, "POST", "/__mock/users", host: "127.0.0.1:\(port)", body: #"{"id":"mallory","email":"m@example.com"}"#), 201)
        assertStatus(try await controlRequest(mock, "POST", "/__mock/reset", host: "127.0.0.1:\(port)"), 200)
        let afterReset = try await mock.now()
        XCTAssertEqual(afterReset, frozenNow)
    }
}

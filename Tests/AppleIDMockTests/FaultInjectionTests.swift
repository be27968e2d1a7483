import AppleIDMock
import Foundation
import Glibc
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Faults on Apple's routes and on notification delivery: what a fault does to the wire (a delay,
/// its exact bytes, cut connections and the descriptors around them) over raw sockets against the
/// live mock; the control API's answers and refusals, replay under a seed, scenario faults and
/// notification faults in memory. Each action is paired with the same request unfaulted.
final class FaultInjectionTests: XCTestCase {
    private func install(_ server: AppleIDMockServer, _ fault: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        let answer = try server.postJSON("/__mock/faults", fault)
        XCTAssertEqual(answer.status, 201, answer.text, file: file, line: line)
        return try jsonObject(answer.body)
    }

    private func install(_ mock: any MockClient, _ fault: String, file: StaticString = #filePath, line: UInt = #line) async throws -> JSONObject {
        let answer = try await mock.postJSON("/__mock/faults", fault)
        XCTAssertEqual(answer.status, 201, answer.text, file: file, line: line)
        return try jsonObject(answer.body)
    }

    func testDelay_OnAuthKeys_WaitsTwoSeconds_WhileAnotherConnectionIsAnsweredAtOnce() throws {
        // The server's clock is the test's: the delay ends when the test moves it, not when 2 s
        // have passed (a loaded machine could take longer than that over the other request).
        let clock = ManualServerClock()
        let server = try startFrozenMock {
            $0.scenario.compatibility.shuffleKeys = false
            $0.http.clock = clock.clock
        }
        defer { server.stop() }
        let keys = try server.get("/auth/keys").raw
        XCTAssertEqual(try install(server, #"{"method":"GET","path":"/auth/keys","action":"delay","delay_ms":2000,"times":1}"#)["id"], "f1")
        let delayed = try server.client()
        try delayed.request("GET", "/auth/keys")
        // The fault fired for the first request (its event is recorded before the answer waits):
        // the feed holds this request in the mock until it has.
        let fired = try jsonObject(server.get("/__mock/events?type=fault-fired&wait=10").body)["events"]?.arrayValue ?? []
        XCTAssertEqual(fired.map { $0.objectValue?["target"] }, ["GET /auth/keys"])
        XCTAssertTrue(try server.get("/__mock/faults/f1").text.contains(#""fired":1"#))
        let other = try server.get("/.well-known/openid-configuration")
        XCTAssertEqual(other.status, 200)
        XCTAssertEqual(delayed.availableNow(), [], "the delayed /auth/keys was answered before the other connection's request")
        clock.pass(1.9, on: server.http)
        XCTAssertEqual(delayed.availableNow(), [], "the delayed /auth/keys was answered before its 2 s")
        clock.pass(0.2, on: server.http)
        XCTAssertEqual(try delayed.readResponse().raw, keys, "after the delay, Apple's own answer, byte for byte")
        // The twin: the fault fired once, so the next request is answered at once and unchanged.
        XCTAssertEqual(try server.get("/auth/keys").raw, keys)
        let entry = try XCTUnwrap(try jsonObject(server.get("/__mock/requests?path=/auth/keys").body)["requests"]?.arrayValue?[1].objectValue)
        XCTAssertEqual(entry["fault"]?.objectValue?["id"], "f1")
        XCTAssertEqual(entry["fault"]?.objectValue?["action"], "delay")
        XCTAssertGreaterThanOrEqual(entry["microseconds"]?.intValue ?? 0, 2_000_000)
    }

    func testRespond_AnswersInsteadOfApple_ForTheMatchingClientOnly_TheNextTimes() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        _ = try install(server, #"{"path":"/auth/token","client_id":"com.example.web","grant_type":"authorization_code","times":2,"action":"respond","status":503,"headers":{"Content-Type":"text/html","Retry-After":"5"},"body":"<html>busy</html>"}"#)
        let code = try server.webCode()
        let form: [(String, String)] = [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("grant_type", "authorization_code"),
                                        ("code", code), ("redirect_uri", webRedirect)]
        let refused = try server.postForm("/auth/token", form)
        XCTAssertEqual(refused.rawText, "HTTP/1.1 503 Service Unavailable\r\nServer: Apple\r\nContent-Type: text/html\r\nRetry-After: 5\r\nContent-Length: 17\r\n\r\n<html>busy</html>")
        // Another grant type and another client pass through to Apple's endpoint.
        XCTAssertEqual(try server.postForm("/auth/token", [("client_id", "com.example.web"), ("grant_type", "refresh_token")]).status, 400)
        XCTAssertEqual(try server.postForm("/auth/token", [("client_id", "com.example.app"), ("grant_type", "authorization_code")]).status, 400)
        XCTAssertEqual(try server.postForm("/auth/token", form).status, 503)
        // Apple's endpoint never saw the two refused exchanges: the code still works, once.
        XCTAssertEqual(try server.postForm("/auth/token", form).status, 200)
        XCTAssertEqual(try server.postForm("/auth/token", form).status, 400)
        let fault = try jsonObject(server.get("/__mock/faults/f1").body)
        XCTAssertEqual(fault["fired"], 2)
        XCTAssertEqual(fault["remaining"], 0)
        let events = try jsonObject(server.get("/__mock/events?type=fault-fired").body)["events"]?.arrayValue ?? []
        XCTAssertEqual(events.map { $0.objectValue?["target"] }, ["POST /auth/token", "POST /auth/token"])
        XCTAssertEqual(events.map { $0.objectValue?["action"] }, ["respond", "respond"])
    }

    func testCloseResetTruncateStall_OnAuthKeys_LeaveNoDescriptorBehind() throws {
        let server = try startFrozenMock { configuration in
            configuration.scenario.compatibility.shuffleKeys = false
            configuration.http = .testing(timeouts: 5)
        }
        defer { server.stop() }
        let keys = try server.get("/auth/keys")
        XCTAssertTrue(eventuallyTrue { server.http.openConnections == 0 })
        let descriptors = try openDescriptorCount()
        let head = String(decoding: keys.raw, as: UTF8.self).components(separatedBy: "\r\n\r\n")[0] + "\r\n\r\n"
        for (fault, expected, end) in [
            (#"{"path":"/auth/keys","action":"close","times":1}"#, "", RawHTTPClient.End.closed),
            (#"{"path":"/auth/keys","action":"reset","times":1}"#, "", .reset),
            (#"{"path":"/auth/keys","action":"truncate","after_bytes":7,"times":1}"#, head + String(keys.text.prefix(7)), .closed),
            (#"{"path":"/auth/keys","action":"stall","after_bytes":5,"times":1}"#, head + String(keys.text.prefix(5)), .timedOut),
        ] {
            _ = try install(server, fault)
            let client = try RawHTTPClient(port: server.port, timeout: 1)
            try client.request("GET", "/auth/keys")
            let (bytes, how) = client.readUntilEnd()
            XCTAssertEqual(String(decoding: bytes, as: UTF8.self), expected, fault)
            XCTAssertEqual(how, end, fault)
            client.close()
            // The twin, once the fault has fired: Apple's whole answer.
            XCTAssertEqual(try server.get("/auth/keys").raw, keys.raw, fault)
        }
        XCTAssertTrue(eventuallyTrue { server.http.openConnections == 0 }, "open: \(server.http.openConnections)")
        XCTAssertEqual(try openDescriptorCount(), descriptors)
        let journal = try jsonObject(server.get("/__mock/requests?path=/auth/keys").body)["requests"]?.arrayValue ?? []
        XCTAssertEqual(journal.compactMap { $0.objectValue?["fault"]?.objectValue?["action"]?.stringValue }, ["close", "reset", "truncate", "stall"])
        XCTAssertEqual(journal.map { $0.objectValue?["status"] }, [200, .null, 200, .null, 200, 200, 200, 200, 200])
    }

    func testProbability_UnderTheSameSeed_FiresOnTheSameRequests() async throws {
        func run(seed: UInt64) async throws -> [Int] {
            let mock = try frozenClient { $0.seed = seed }
            _ = try await install(mock, #"{"path":"/auth/keys","probability":0.5,"action":"respond","status":503}"#)
            var statuses: [Int] = []
            for _ in 0..<40 { statuses.append(try await mock.get("/auth/keys").status) }
            return statuses
        }
        let first = try await run(seed: 7)
        let again = try await run(seed: 7)
        XCTAssertEqual(again, first, "the same seed fires the same faults on the same requests")
        XCTAssertTrue(first.contains(503) && first.contains(200), "\(first)")
        // Another seed draws another pattern.
        let other = try await run(seed: 8)
        XCTAssertNotEqual(other, first)
    }

    func testControlAPI_ListsShowsAndDeletes_AndRefusesFaultsThatCannotMatch() async throws {
        let mock = try frozenClient()
        _ = try await install(mock, #"{"path":"/auth/keys","action":"respond","status":500}"#)
        _ = try await install(mock, #"{"target":"notifications","action":"drop","times":1}"#)
        assertStatus(try await mock.get("/auth/keys"), 500)
        let listed = try await mock.get("/__mock/faults")
        XCTAssertEqual(listed.text,
                       #"{"faults":[{"action":"respond","always":true,"body":"","fired":1,"headers":{},"id":"f1","path":"/auth/keys","remaining":null,"status":500,"target":"http","until":null},"#
                       + #"{"action":"drop","fired":0,"id":"f2","remaining":1,"target":"notifications","times":1,"until":null}]}"#)
        assertStatus(try await mock.delete("/__mock/faults/f1"), 200)
        assertStatus(try await mock.get("/auth/keys"), 200, "a removed fault no longer fires")
        let missing = try await mock.delete("/__mock/faults/f1")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.text, #"{"error":"no fault \"f1\" (GET /__mock/faults lists them)","field":"id"}"#)
        let removed = try await mock.delete("/__mock/faults")
        XCTAssertEqual(removed.text, #"{"removed":1}"#)
        for (body, field) in [
            (#"{"path":"/__mock/health","action":"close"}"#, "path"),
            (#"{"path":"/auth/nothing","action":"close"}"#, "path"),
            (#"{"path":"/auth/keys","method":"POST","action":"close"}"#, "method"),
            (#"{"path":"/auth/keys","action":"delay","delay_ms":-5}"#, "delay_ms"),
            (#"{"path":"/auth/keys","action":"delay"}"#, "delay_ms"),
            (#"{"path":"/auth/keys","action":"close","probability":1.01}"#, "probability"),
            (#"{"path":"/auth/keys","action":"close","probability":-0.1}"#, "probability"),
            (#"{"path":"/auth/keys","action":"close","times":0}"#, "times"),
            (#"{"path":"/auth/keys","action":"close","times":2,"probability":0.5}"#, "probability"),
            (#"{"path":"/auth/keys","action":"explode"}"#, "action"),
            (#"{"path":"/auth/keys"}"#, "action"),
            (#"{"path":"/auth/keys","action":"respond"}"#, "status"),
            (#"{"path":"/auth/keys","action":"respond","status":204,"body":"x"}"#, "body"),
            (#"{"path":"/auth/keys","action":"respond","status":200,"headers":{"Bad Name":"x"}}"#, "headers"),
            (#"{"path":"/auth/keys","action":"close","after_bytes":3}"#, "after_bytes"),
            (#"{"target":"notifications","action":"close"}"#, "action"),
            (#"{"target":"notifications","action":"drop","type":"birthday"}"#, "type"),
            (#"{"target":"notifications","action":"drop","path":"/auth/keys"}"#, "path"),
            (#"{"target":"mail","action":"drop"}"#, "target"),
            (#"{"path":"/auth/keys","action":"close","colour":"red"}"#, "colour"),
        ] {
            let refused = try await mock.postJSON("/__mock/faults", body)
            XCTAssertEqual(refused.status, 400, body)
            XCTAssertEqual(try jsonObject(refused.body)["field"], .string(field), "\(body): \(refused.text)")
        }
        let none = try await mock.get("/__mock/faults")
        XCTAssertEqual(none.text, #"{"faults":[]}"#, "a refused fault is not installed")
    }

    func testScenarioFaults_AreInstalledAtStart_AndAgainAtReset_AndBadOnesNameTheirPath() async throws {
        var scenario = Scenario.default
        scenario.faults = [try FaultSpec(json: JSONParser.parse(Array(#"{"path":"/auth/keys","action":"respond","status":429,"headers":{"Retry-After":"1"},"times":1}"#.utf8)))]
        let reread = try Scenario.load(json: Array(scenario.prettyJSON.utf8))
        XCTAssertEqual(reread.faults, scenario.faults)
        let mock = try frozenClient { $0.scenario.faults = scenario.faults }
        assertStatus(try await mock.get("/auth/keys"), 429)
        assertStatus(try await mock.get("/auth/keys"), 200)
        assertStatus(try await mock.postJSON("/__mock/reset", ""), 200)
        assertStatus(try await mock.get("/auth/keys"), 429, "a reset puts the scenario's faults back, unfired")
        var json = try XCTUnwrap(try JSONParser.parse(Array(Scenario.default.prettyJSON.utf8)).objectValue)
        json["faults"] = .array([.object(["path": "/auth/keys", "action": "close"]), .object(["path": "/__mock/reset", "action": "close"])])
        XCTAssertThrowsError(try Scenario.load(json: JSONWriter.compact(.object(json)))) { error in
            XCTAssertEqual((error as? ScenarioError)?.description.contains("faults[1].path"), true, "\(error)")
        }
    }

    func testNotificationFaults_DropDuplicateDelayAndReorder() async throws {
        let transport = EventTypeTransport()
        let mock = try frozenClient { configuration in
            configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
            configuration.notificationTransport = transport
        }
        _ = try await install(mock, #"{"target":"notifications","type":"consent-revoked","action":"drop","times":1}"#)
        _ = try await install(mock, #"{"target":"notifications","type":"email-disabled","action":"duplicate","times":1}"#)
        _ = try await install(mock, #"{"target":"notifications","type":"email-enabled","action":"reorder","times":1}"#)
        _ = try await install(mock, #"{"target":"notifications","type":"account-delete","action":"delay","delay_ms":300,"times":1}"#)
        func event(_ type: String, _ user: String) async throws {
            assertStatus(try await mock.postJSON("/__mock/events", #"{"type":"\#(type)","user":"\#(user)","client_id":"com.example.app"}"#), 202)
        }
        _ = try await mock.nativeSignIn(user: "alice")
        try await event("consent-revoked", "alice")
        _ = try await mock.nativeSignIn(user: "bob", hideEmail: true)
        try await event("email-disabled", "bob")
        // The deliverer sends on four workers: both copies are out before the next event is
        // queued, or a copy may race it (the live version of this test kept the order by being slow).
        _ = await transport.types(atLeast: 2)
        try await event("email-enabled", "bob")
        _ = try await mock.nativeSignIn(user: "alice")
        try await event("consent-revoked", "alice")
        try await event("account-delete", "alice")
        // Dropped: never sent. Duplicated: twice. Reordered: after the next one. Delayed: still sent.
        let sent = await transport.types(atLeast: 5)
        XCTAssertEqual(sent, ["email-disabled", "email-disabled", "consent-revoked", "email-enabled", "account-deleted"])
        // The transport has answered the last one; its outcome is recorded just after.
        let log = try await mock.settledNotifications(6)
        XCTAssertEqual(log.map { $0["outcome"] }, ["dropped", "delivered", "delivered", "delivered", "delivered", "delivered"])
        XCTAssertEqual(log.map { $0["fault"]?.objectValue?["action"] ?? .null }, ["drop", "duplicate", "duplicate", "reorder", .null, "delay"])
        let fired = try await mock.firedFaults(4)
        XCTAssertEqual(fired.map { $0["target"] }, ["notification consent-revoked", "notification email-disabled",
                                                     "notification email-enabled", "notification account-delete"])
    }
}

/// A notification transport that records the event type of each body it is given and answers 200.
private final class EventTypeTransport: NotificationTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [String] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    var types: [String] { lock.withLock { received } }

    /// The types received once there are `count` (or after `seconds`, whatever there is): the
    /// transport resumes the waiter from the post that makes the count.
    func types(atLeast count: Int, seconds: Double = 10) async -> [String] {
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.lock.withLock {
                        guard self.received.count < count else { return true }
                        self.waiters.append((count, continuation))
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
            await group.next()
            group.cancelAll()
            self.releaseAll()
        }
        return types
    }

    /// Resumes every waiter (the wait is over either way).
    private func releaseAll() {
        let released = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            defer { waiters = [] }
            return waiters.map(\.continuation)
        }
        for continuation in released { continuation.resume() }
    }

    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        let payload = (try? JSONParser.parse(body))?.objectValue?["payload"]?.stringValue
        let claims = payload.flatMap { try? CompactJWS.parse($0) }?.payloadJSON
        let events: JSONObject? = switch claims?["events"] {
        case .string(let text)?: (try? JSONParser.parse(Array(text.utf8)))?.objectValue
        case .object(let object)?: object
        default: nil
        }
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            received.append(events?["type"]?.stringValue ?? "?")
            let due = waiters.filter { $0.count <= received.count }
            waiters.removeAll { $0.count <= received.count }
            return due.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
        return NotificationRecord.Attempt(at: Date().timeIntervalSince1970, status: 200, error: nil)
    }
}

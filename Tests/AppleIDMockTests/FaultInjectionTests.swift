import AppleIDMock
import Foundation
import Glibc
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Faults on Apple's routes and on notification delivery, over raw sockets against the live mock:
/// each action paired with the same request unfaulted, the control API's answers and refusals,
/// replay under a seed, and descriptors counted around the faults that cut connections.
final class FaultInjectionTests: XCTestCase {
    private func install(_ server: AppleIDMockServer, _ fault: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        let answer = try server.postJSON("/__mock/faults", fault)
        XCTAssertEqual(answer.status, 201, answer.text, file: file, line: line)
        return try jsonObject(answer.body)
    }

    func testDelay_OnAuthKeys_WaitsTwoSeconds_WhileAnotherConnectionIsAnsweredAtOnce() throws {
        let server = try startFrozenMock { $0.scenario.compatibility.shuffleKeys = false }
        defer { server.stop() }
        let keys = try server.get("/auth/keys").raw
        XCTAssertEqual(try install(server, #"{"method":"GET","path":"/auth/keys","action":"delay","delay_ms":2000,"times":1}"#)["id"], "f1")
        let delayed = try server.client()
        try delayed.request("GET", "/auth/keys")
        // The fault fired for the first request (its event is recorded before the answer waits).
        XCTAssertTrue(eventuallyTrue { (try? server.get("/__mock/faults/f1").text.contains(#""fired":1"#)) == true })
        let other = try server.get("/.well-known/openid-configuration")
        XCTAssertEqual(other.status, 200)
        XCTAssertEqual(delayed.availableNow(), [], "the delayed /auth/keys was answered before the other connection's request")
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

    func testProbability_UnderTheSameSeed_FiresOnTheSameRequests() throws {
        func run() throws -> [Int] {
            let server = try startFrozenMock { $0.seed = 7 }
            defer { server.stop() }
            _ = try install(server, #"{"path":"/auth/keys","probability":0.5,"action":"respond","status":503}"#)
            return try (0..<40).map { _ in try server.get("/auth/keys").status }
        }
        let first = try run()
        XCTAssertEqual(try run(), first, "the same seed fires the same faults on the same requests")
        XCTAssertTrue(first.contains(503) && first.contains(200), "\(first)")
        // Another seed draws another pattern.
        let server = try startFrozenMock { $0.seed = 8 }
        defer { server.stop() }
        _ = try install(server, #"{"path":"/auth/keys","probability":0.5,"action":"respond","status":503}"#)
        XCTAssertNotEqual(try (0..<40).map { _ in try server.get("/auth/keys").status }, first)
    }

    func testControlAPI_ListsShowsAndDeletes_AndRefusesFaultsThatCannotMatch() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        _ = try install(server, #"{"path":"/auth/keys","action":"respond","status":500}"#)
        _ = try install(server, #"{"target":"notifications","action":"drop","times":1}"#)
        XCTAssertEqual(try server.get("/auth/keys").status, 500)
        XCTAssertEqual(try server.get("/__mock/faults").text,
                       #"{"faults":[{"action":"respond","always":true,"body":"","fired":1,"headers":{},"id":"f1","path":"/auth/keys","remaining":null,"status":500,"target":"http","until":null},"#
                       + #"{"action":"drop","fired":0,"id":"f2","remaining":1,"target":"notifications","times":1,"until":null}]}"#)
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/faults/f1").status, 200)
        XCTAssertEqual(try server.get("/auth/keys").status, 200, "a removed fault no longer fires")
        let missing = try server.client().roundTrip("DELETE", "/__mock/faults/f1")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.text, #"{"error":"no fault \"f1\" (GET /__mock/faults lists them)","field":"id"}"#)
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/faults").text, #"{"removed":1}"#)
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
            let refused = try server.postJSON("/__mock/faults", body)
            XCTAssertEqual(refused.status, 400, body)
            XCTAssertEqual(try jsonObject(refused.body)["field"], .string(field), "\(body): \(refused.text)")
        }
        XCTAssertEqual(try server.get("/__mock/faults").text, #"{"faults":[]}"#, "a refused fault is not installed")
    }

    func testScenarioFaults_AreInstalledAtStart_AndAgainAtReset_AndBadOnesNameTheirPath() throws {
        var scenario = Scenario.default
        scenario.faults = [try FaultSpec(json: JSONParser.parse(Array(#"{"path":"/auth/keys","action":"respond","status":429,"headers":{"Retry-After":"1"},"times":1}"#.utf8)))]
        let reread = try Scenario.load(json: Array(scenario.prettyJSON.utf8))
        XCTAssertEqual(reread.faults, scenario.faults)
        let server = try startFrozenMock { $0.scenario.faults = scenario.faults }
        defer { server.stop() }
        XCTAssertEqual(try server.get("/auth/keys").status, 429)
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(try server.postJSON("/__mock/reset", "").status, 200)
        XCTAssertEqual(try server.get("/auth/keys").status, 429, "a reset puts the scenario's faults back, unfired")
        var json = try XCTUnwrap(try JSONParser.parse(Array(Scenario.default.prettyJSON.utf8)).objectValue)
        json["faults"] = .array([.object(["path": "/auth/keys", "action": "close"]), .object(["path": "/__mock/reset", "action": "close"])])
        XCTAssertThrowsError(try Scenario.load(json: JSONWriter.compact(.object(json)))) { error in
            XCTAssertEqual((error as? ScenarioError)?.description.contains("faults[1].path"), true, "\(error)")
        }
    }

    func testNotificationFaults_DropDuplicateDelayAndReorder() throws {
        let transport = EventTypeTransport()
        let server = try startFrozenMock { configuration in
            configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
            configuration.notificationTransport = transport
        }
        defer { server.stop() }
        _ = try install(server, #"{"target":"notifications","type":"consent-revoked","action":"drop","times":1}"#)
        _ = try install(server, #"{"target":"notifications","type":"email-disabled","action":"duplicate","times":1}"#)
        _ = try install(server, #"{"target":"notifications","type":"email-enabled","action":"reorder","times":1}"#)
        _ = try install(server, #"{"target":"notifications","type":"account-delete","action":"delay","delay_ms":300,"times":1}"#)
        func event(_ type: String, _ user: String) throws {
            XCTAssertEqual(try server.postJSON("/__mock/events", #"{"type":"\#(type)","user":"\#(user)","client_id":"com.example.app"}"#).status, 202)
        }
        _ = try server.nativeSignIn(user: "alice")
        try event("consent-revoked", "alice")
        _ = try server.nativeSignIn(user: "bob", hideEmail: true)
        try event("email-disabled", "bob")
        try event("email-enabled", "bob")
        _ = try server.nativeSignIn(user: "alice")
        try event("consent-revoked", "alice")
        try event("account-delete", "alice")
        XCTAssertTrue(eventuallyTrue(seconds: 10) { transport.types.count == 5 }, "\(transport.types)")
        // Dropped: never sent. Duplicated: twice. Reordered: after the next one. Delayed: still sent.
        XCTAssertEqual(transport.types, ["email-disabled", "email-disabled", "consent-revoked", "email-enabled", "account-deleted"])
        func log() throws -> [JSONValue] { try jsonObject(server.get("/__mock/notifications").body)["notifications"]?.arrayValue ?? [] }
        // The transport has answered the last one; its outcome is recorded just after.
        XCTAssertTrue(eventuallyTrue { ((try? log()) ?? []).allSatisfy { $0.objectValue?["outcome"] != "pending" } })
        let log = try log()
        XCTAssertEqual(log.map { $0.objectValue?["outcome"] }, ["dropped", "delivered", "delivered", "delivered", "delivered", "delivered"])
        XCTAssertEqual(log.map { $0.objectValue?["fault"]?.objectValue?["action"] ?? .null }, ["drop", "duplicate", "duplicate", "reorder", .null, "delay"])
        let fired = try jsonObject(server.get("/__mock/events?type=fault-fired").body)["events"]?.arrayValue ?? []
        XCTAssertEqual(fired.map { $0.objectValue?["target"] }, ["notification consent-revoked", "notification email-disabled",
                                                                  "notification email-enabled", "notification account-delete"])
    }
}

/// A notification transport that records the event type of each body it is given and answers 200.
private final class EventTypeTransport: NotificationTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var received: [String] = []

    var types: [String] { lock.withLock { received } }

    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        let payload = (try? JSONParser.parse(body))?.objectValue?["payload"]?.stringValue
        let claims = payload.flatMap { try? CompactJWS.parse($0) }?.payloadJSON
        let events: JSONObject? = switch claims?["events"] {
        case .string(let text)?: (try? JSONParser.parse(Array(text.utf8)))?.objectValue
        case .object(let object)?: object
        default: nil
        }
        lock.withLock { received.append(events?["type"]?.stringValue ?? "?") }
        return NotificationRecord.Attempt(at: Date().timeIntervalSince1970, status: 200, error: nil)
    }
}

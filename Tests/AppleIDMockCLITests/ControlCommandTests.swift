import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// `appleid-mock clock`, `keys` and `reset` against a running mock, as processes: exit 0 with the
/// server's JSON, 2 for bad arguments, 1 when the server refuses or cannot be reached.
final class ControlCommandTests: XCTestCase {
    private var server: CLIProcess.Server!
    private var url = ""

    override func setUpWithError() throws {
        server = try CLIProcess.Server(["--port", "0"])
        url = "http://127.0.0.1:\(try XCTUnwrap(server.port, server.firstLine))"
    }

    override func tearDown() {
        server?.stop()
    }

    private func run(_ arguments: [String]) throws -> CLIProcess.Result {
        try CLIProcess.run(arguments + ["--server", url])
    }

    private func json(_ result: CLIProcess.Result, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        guard case .object(let object) = try JSONParser.parse(Array(result.stdout.utf8)) else { throw JOSEError.malformedJWS("not an object") }
        return object
    }

    func testClock_ShowsSetsFreezesAndAdvances() throws {
        XCTAssertEqual(try json(try run(["clock"]))["frozen"], false)
        let set = try json(try run(["clock", "set", "2030-01-01T00:00:00Z"]))
        XCTAssertEqual(set["now"], "2030-01-01T00:00:00Z")
        XCTAssertEqual(try json(try run(["clock", "freeze"]))["frozen"], true)
        let advanced = try json(try run(["clock", "advance", "301"]))
        XCTAssertEqual(advanced["now"], "2030-01-01T00:05:01Z")
        XCTAssertEqual(advanced["epoch"], .int(1_893_456_301))
        XCTAssertEqual(try json(try run(["clock", "advance", "-1"]))["now"], "2030-01-01T00:05:00Z")
        XCTAssertEqual(try json(try run(["clock", "unfreeze"]))["frozen"], false)
        XCTAssertEqual(try json(try run(["clock", "show"]))["frozen"], false)
    }

    func testClock_RejectsBadArgumentsWithExitTwo_AndServerRefusalWithExitOne() throws {
        for arguments in [["clock", "advance"], ["clock", "advance", "soon"], ["clock", "set", "tomorrow"], ["clock", "spin"], ["clock", "freeze", "now"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertTrue(result.stderr.hasPrefix("appleid-mock: "), result.stderr)
        }
        let refused = try run(["clock", "set", "2200-01-01T00:00:00Z"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertEqual(refused.stderr,
                       "appleid-mock: the mock answered 400: {\"error\":\"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z\",\"field\":\"set\"}\n")
        let unreachable = try CLIProcess.run(["clock", "--server", "http://127.0.0.1:1", "--timeout", "2"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(unreachable.stderr.hasPrefix("appleid-mock: cannot reach http://127.0.0.1:1: "), unreachable.stderr)
    }

    func testEventPasswordChanged_TakesAUserAndNoClient_AndNotifiesNone() throws {
        let changed = try run(["event", "password-changed", "--user", "alice"])
        XCTAssertEqual(changed.status, 0, changed.stderr)
        XCTAssertEqual(changed.stdout, #"{"notification":null,"notifications":[],"type":"password-changed","user":"alice"}"# + "\n")
        let withClient = try run(["event", "password-changed", "--user", "alice", "--client", "com.example.app"])
        XCTAssertEqual(withClient.status, 2)
        XCTAssertTrue(withClient.stderr.hasPrefix("appleid-mock: --client is not for password-changed"), withClient.stderr)
        // Twin: the other events still need their client.
        let noClient = try run(["event", "consent-revoked", "--user", "alice"])
        XCTAssertEqual(noClient.status, 2)
        XCTAssertTrue(noClient.stderr.hasPrefix("appleid-mock: --client is required"), noClient.stderr)
        let unknown = try run(["event", "password-changed", "--user", "mallory"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertEqual(unknown.stderr, #"appleid-mock: the mock answered 404: {"error":"no user \"mallory\"","field":"user"}"# + "\n")
    }

    func testKeys_ListRotatePublishActivateRetire() throws {
        let listed = try json(try run(["keys"]))
        XCTAssertEqual(listed["active_kid"], "W2ek7HdPaL")
        let rotated = try json(try run(["keys", "rotate"]))
        XCTAssertEqual(rotated["previous"], "W2ek7HdPaL")
        let fresh = try XCTUnwrap(rotated["kid"]?.stringValue)
        XCTAssertEqual(fresh.count, 10)
        XCTAssertEqual(try json(try run(["keys", "list"]))["active_kid"], .string(fresh))
        XCTAssertEqual(try json(try run(["keys", "retire", "W2ek7HdPaL"]))["state"], "retired")
        let published = try json(try run(["keys", "publish", "--kid", "Custom1", "--pem", CLIProcess.root + "/Keys/signing/Ymq4vB9xTz.pem"]))
        XCTAssertEqual(published["kid"], "Custom1")
        XCTAssertEqual(try json(try run(["keys", "activate", "Custom1"]))["state"], "active")
        let keys = try RawHTTPClient(port: try XCTUnwrap(server.port)).roundTrip("GET", "/auth/keys").text
        XCTAssertTrue(keys.contains("\"kid\":\"Custom1\""))
        XCTAssertFalse(keys.contains("W2ek7HdPaL"))
        // Refused twins: the signing key cannot be retired; an unknown kid is the server's 404.
        let active = try run(["keys", "retire", "Custom1"])
        XCTAssertEqual(active.status, 1)
        XCTAssertTrue(active.stderr.hasPrefix("appleid-mock: the mock answered 409: "), active.stderr)
        XCTAssertEqual(try run(["keys", "activate", "Nope1"]).status, 1)
        for arguments in [["keys", "activate"], ["keys", "retire", "bad-kid!"], ["keys", "publish", "--pem", "/nonexistent.pem"], ["keys", "spin"],
                          ["keys", "list", "--kid", "Custom2"]] {
            XCTAssertEqual(try run(arguments).status, 2, "\(arguments)")
        }
    }

    func testHealth_ExitsZeroWhenTheMockAnswers_OneWhenItCannotBeReached() throws {
        let healthy = try run(["health"])
        XCTAssertEqual(healthy.status, 0, healthy.stderr)
        XCTAssertEqual(healthy.stdout, #"{"active_kid":"W2ek7HdPaL","issuer":"https://appleid.apple.com","status":"ok"}"# + "\n")
        let unreachable = try CLIProcess.run(["health", "--server", "http://127.0.0.1:1", "--timeout", "2"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertEqual(try CLIProcess.run(["health", "extra"]).status, 2)
    }

    func testHealthWait_ReturnsOnceAMockStartedLaterAnswers_AndFailsWhenNoneDoes() throws {
        // A port nothing listens on yet: bound to 0 to learn a free one, then closed.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        XCTAssertEqual(withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) } }, 0)
        XCTAssertEqual(withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &length) } }, 0)
        close(probe)
        let port = Int(UInt16(bigEndian: address.sin_port))

        let waiting = Process()
        waiting.executableURL = URL(fileURLWithPath: CLIProcess.binary)
        waiting.arguments = ["health", "--wait", "120", "--timeout", "2", "--server", "http://127.0.0.1:\(port)"]
        let output = Pipe()
        waiting.standardOutput = output
        waiting.standardError = FileHandle.nullDevice
        try waiting.run()
        let later = try CLIProcess.Server(["--port", String(port)])
        defer { later.stop() }
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        waiting.waitUntilExit()
        XCTAssertEqual(waiting.terminationStatus, 0)
        XCTAssertEqual(String(decoding: printed, as: UTF8.self), #"{"active_kid":"W2ek7HdPaL","issuer":"https://appleid.apple.com","status":"ok"}"# + "\n")

        let none = try CLIProcess.run(["health", "--wait", "1", "--timeout", "1", "--server", "http://127.0.0.1:1"])
        XCTAssertEqual(none.status, 1)
        XCTAssertTrue(none.stderr.hasPrefix("appleid-mock: cannot reach http://127.0.0.1:1: "), none.stderr)
        for bad in ["-1", "soon", "3601"] {
            let result = try CLIProcess.run(["health", "--wait", bad, "--server", url])
            XCTAssertEqual(result.status, 2, bad)
            XCTAssertTrue(result.stderr.hasPrefix("appleid-mock: --wait expects an integer from 0 to 3600, got \"\(bad)\""), result.stderr)
        }
    }

    func testReset_ReturnsTheScenariosKeysAndClock() throws {
        _ = try json(try run(["keys", "rotate"]))
        _ = try json(try run(["clock", "set", "2030-01-01T00:00:00Z"]))
        let reset = try json(try run(["reset"]))
        XCTAssertEqual(reset["active_kid"], "W2ek7HdPaL")
        XCTAssertNotEqual(reset["now"], "2030-01-01T00:00:00Z")
        XCTAssertEqual(try run(["reset", "extra"]).status, 2)
    }
}

/// `appleid-mock faults` against a running mock: list, add, an incident with its minutes, remove,
/// clear by incident; bad arguments exit 2, the mock's refusals 1.
final class FaultsCommandTests: XCTestCase {
    private var server: CLIProcess.Server!
    private var url = ""

    override func setUpWithError() throws {
        server = try CLIProcess.Server(["--port", "0"])
        url = "http://127.0.0.1:\(try XCTUnwrap(server.port, server.firstLine))"
    }

    override func tearDown() {
        server?.stop()
    }

    private func run(_ arguments: [String]) throws -> CLIProcess.Result {
        try CLIProcess.run(arguments + ["--server", url])
    }

    private func json(_ result: CLIProcess.Result, file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        XCTAssertEqual(result.status, 0, result.stderr, file: file, line: line)
        guard case .object(let object) = try JSONParser.parse(Array(result.stdout.utf8)) else { throw JOSEError.malformedJWS("not an object") }
        return object
    }

    func testFaults_AddsAnIncidentListsRemovesAndClearsIt() throws {
        let installed = try json(try run(["faults", "incident", "token-endpoint-outage", "--minutes", "3"]))
        XCTAssertEqual(installed["incident"], "token-endpoint-outage")
        XCTAssertEqual(installed["faults"]?.arrayValue?.first?.objectValue?["for_seconds"], .int(180))
        let token = try RawHTTPClient(port: try XCTUnwrap(server.port)).roundTrip("POST", "/auth/token", headers: [("Content-Type", "application/x-www-form-urlencoded")],
                                                                                 body: Array("grant_type=refresh_token".utf8))
        XCTAssertEqual(token.status, 503)
        let added = try json(try run(["faults", "add", #"{"path":"/auth/keys","action":"delay","delay_ms":1}"#]))
        XCTAssertEqual(added["id"], "f2")
        XCTAssertEqual(try json(try run(["faults"]))["faults"]?.arrayValue?.count, 2)
        XCTAssertEqual(try json(try run(["faults", "clear", "--incident", "token-endpoint-outage"]))["removed"], .int(1))
        XCTAssertEqual(try json(try run(["faults", "remove", "f2"]))["id"], "f2")
        XCTAssertEqual(try json(try run(["faults", "list"]))["faults"], .array([]))
        // The mock's refusals exit 1 with its answer.
        let unknown = try run(["faults", "remove", "f9"])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.stderr.hasPrefix("appleid-mock: the mock answered 404: "), unknown.stderr)
        let refused = try run(["faults", "add", #"{"path":"/__mock/users","action":"close"}"#])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.stderr.contains(#""field":"path""#), refused.stderr)
    }

    func testFaults_RefusesBadArgumentsWithExitTwo_AndListsIncidentsOffline() throws {
        for arguments in [["faults", "incident"], ["faults", "incident", "apple-down"], ["faults", "incident", "token-endpoint-outage", "--minutes", "0"],
                          ["faults", "add"], ["faults", "add", "[1]"], ["faults", "remove"], ["faults", "remove", "f1/x"], ["faults", "clear", "--incident", "nope"],
                          ["faults", "list", "--minutes", "3"], ["faults", "spin"]] {
            let result = try run(arguments)
            XCTAssertEqual(result.status, 2, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.hasPrefix("appleid-mock: "), result.stderr)
        }
        let incidents = try CLIProcess.run(["faults", "incidents"])
        XCTAssertEqual(incidents.status, 0)
        XCTAssertEqual(incidents.stdout.split(separator: "\n").map { String($0.split(separator: " ")[0]) }, FaultIncident.allCases.map(\.rawValue))
    }
}

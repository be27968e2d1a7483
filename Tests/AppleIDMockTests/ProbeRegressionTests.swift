import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// One test per finding of the robustness probe (shared/reports/robustness-probe-2026-11-22.md)
/// that lives in the Apple layer; each would fail at d1d459f. Every refused input has an accepted twin.
final class ProbeRegressionTests: XCTestCase {
    private static let unsupported = "Request missing required parameter or unsupported parameters or invalid redirect url"

    // MARK: - F2, F3: every count and index the domain relies on is a rule

    /// The built-in scenario as JSON with the first team's clients replaced.
    private func scenarioJSON(clients: [JSONValue]) throws -> [UInt8] {
        var top = try XCTUnwrap(Scenario.default.json.objectValue)
        var team = try XCTUnwrap(top["teams"]?.arrayValue?.first?.objectValue)
        team["clients"] = .array(clients)
        top["teams"] = .array([.object(team)])
        return JSONWriter.compact(.object(top))
    }

    func testScenario_RejectsTeamWithoutClients_F2() throws {
        let error = try XCTUnwrap(assertThrows(try Scenario.load(json: try scenarioJSON(clients: []))) as? ScenarioError)
        XCTAssertEqual(error.problems, [.init(path: "teams[0].clients", message: "expected at least one client")])
        XCTAssertNoThrow(try Scenario.load(json: try scenarioJSON(clients: [["client_id": "com.example.app", "type": "app_id"]])))
    }

    func testServerStart_RejectsSwiftBuiltScenarioWithoutClients_F2() throws {
        var scenario = Scenario.default
        scenario.teams[0].clients = []
        guard case .scenario(let error)? = assertThrows(try startMock { $0.scenario = scenario }) as? AppleIDMockError else {
            return XCTFail("expected a scenario error")
        }
        XCTAssertEqual(error.problems.first?.path, "teams[0].clients")
        let server = try startMock()
        defer { server.stop() }
        // The twin: id-token without client_id falls back to the first client, which exists.
        let response = try server.postJSON("/__mock/id-token", #"{"user":"alice"}"#)
        XCTAssertEqual(response.status, 200, response.text)
    }

    func testAtScale_Scenario_RejectsMoreThan65536Clients_F3() throws {
        func clients(_ count: Int) -> [JSONValue] {
            (0..<count).map { .object(["client_id": .string("a\(String($0, radix: 16))"), "type": "app_id"]) }
        }
        let error = try XCTUnwrap(assertThrows(try Scenario.load(json: try scenarioJSON(clients: clients(65_537)))) as? ScenarioError)
        XCTAssertEqual(error.problems, [.init(path: "teams[0].clients", message: "expected at most 65536 clients across all teams")])
        XCTAssertEqual(try Scenario.load(json: try scenarioJSON(clients: clients(65_536))).teams[0].clients.count, 65_536)
    }

    // MARK: - F5: stored strings and pending codes are bounded

    func testStoredStrings_AreBoundedAt1024Bytes_F5() throws {
        let server = try startMock()
        defer { server.stop() }
        let long = String(repeating: "n", count: 1025)
        let fine = String(repeating: "n", count: 1024)
        func headless(_ field: String, _ value: String) throws -> RawHTTPResponse {
            try server.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"alice","\#(field)":"\#(value)"}"#)
        }
        for field in ["nonce", "state"] {
            let refused = try headless(field, long)
            XCTAssertEqual(refused.status, 400)
            XCTAssertEqual(refused.text, #"{"apple_error":"invalid_request","error":"\#(Self.unsupported)","field":"\#(field)"}"#)
            XCTAssertEqual(try headless(field, fine).status, 200)
        }
        let page = try server.authorizePage([("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", "code"), ("state", long)])
        assertAuthorizeErrorPage(page, code: "invalid_request", message: Self.unsupported)
        XCTAssertEqual(try server.authorizePage([("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", "code"), ("state", fine)]).status, 200)

        let native = try server.postJSON("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app","nonce":"\#(long)"}"#)
        XCTAssertEqual(native.text, #"{"error":"expected at most 1024 bytes","field":"nonce"}"#)
        XCTAssertEqual(try server.postJSON("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app","nonce":"\#(fine)"}"#).status, 200)
        let token = try server.postJSON("/__mock/id-token", #"{"user":"alice","nonce":"\#(long)"}"#)
        XCTAssertEqual(token.text, #"{"error":"expected at most 1024 bytes","field":"nonce"}"#)
        XCTAssertEqual(try server.postJSON("/__mock/id-token", #"{"user":"alice","nonce":"\#(fine)"}"#).status, 200)
    }

    func testPendingCodes_AreCapped_AndRoomReturnsOnRedemption_F5() throws {
        let server = try startFrozenMock { $0.maxPendingCodes = 2 }
        defer { server.stop() }
        let first = try server.webCode()
        _ = try server.webCode(user: "bob")
        let full = try server.postJSON("/__mock/authorize", #"{"client_id":"com.example.web","redirect_uri":"\#(webRedirect)","response_type":"code","user":"alice"}"#)
        XCTAssertEqual(full.status, 503)
        XCTAssertEqual(full.text, #"{"apple_error":"temporarily_unavailable","error":"the mock holds 2 unredeemed authorization codes; redeem them or let them expire","field":"code"}"#)
        let native = try server.postJSON("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(native.status, 503)
        let parameters = [("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", "code")]
        let consent = try server.get("/auth/authorize?" + HTTPForm.encode(parameters))
        let page = try server.postForm("/auth/authorize", hiddenFields(consent.text) + [("mock_action", "continue"), ("mock_user", "alice")])
        XCTAssertEqual(page.status, 503)
        XCTAssertEqual(authorizeErrorPage(page).code, "temporarily_unavailable")
        XCTAssertEqual(try server.redeem(first).status, 200)
        XCTAssertNoThrow(try server.webCode())
    }

    // MARK: - F6, F7: nothing from a scenario can break the response framing

    func testScenario_RejectsControlCharactersInURLs_F6() throws {
        for bad in ["https://a.example/x\r\nSet-Cookie: pwned=1", "https://c.example/\u{0}nul", "https://a.example/a b", "https://a.example/\u{7f}"] {
            var scenario = Scenario.default
            scenario.teams[0].clients[1].redirectURIs = [bad]
            let error = try XCTUnwrap(assertThrows(try Scenario.load(json: Array(scenario.prettyJSON.utf8))) as? ScenarioError)
            XCTAssertEqual(error.problems, [.init(path: "teams[0].clients[1].redirect_uris[0]",
                                                  message: "expected an absolute URL without spaces or control characters")])
            scenario.teams[0].clients[1].redirectURIs = [webRedirect]
            scenario.teams[0].notificationURL = bad
            XCTAssertEqual((assertThrows(try Scenario.load(json: Array(scenario.prettyJSON.utf8))) as? ScenarioError)?.problems.first?.path,
                           "teams[0].notification_url")
        }
        var twin = Scenario.default
        twin.teams[0].clients[1].redirectURIs = ["https://a.example/x?y=%0D%0A"]
        XCTAssertNoThrow(try Scenario.load(json: Array(twin.prettyJSON.utf8)))
    }

    func testScenario_RejectsBodilessAuthorizeErrorStatus_F7() throws {
        for status in [204, 205, 304] {
            var scenario = Scenario.default
            scenario.compatibility.authorizeErrorStatus = status
            let error = try XCTUnwrap(assertThrows(try Scenario.load(json: Array(scenario.prettyJSON.utf8))) as? ScenarioError)
            XCTAssertEqual(error.problems, [.init(path: "compatibility.authorize_error_status",
                                                  message: "expected a status that carries a body (not 204, 205 or 304)")])
        }
        var twin = Scenario.default
        twin.compatibility.authorizeErrorStatus = 200
        XCTAssertEqual(try Scenario.load(json: Array(twin.prettyJSON.utf8)).compatibility.authorizeErrorStatus, 200)
    }

    // MARK: - F9, F10, F13: files

    func testScenarioFile_NamingAMissingOrNonDirectoryKeysDirectory_IsRejected_F9() throws {
        let file = NSTemporaryDirectory() + "probe-f9-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        for directory in ["/nonexistent/typo-keys", "/etc/passwd", "/dev/zero"] {
            var scenario = Scenario.default
            scenario.signingKeys.directory = directory
            try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
            let error = try XCTUnwrap(assertThrows(try Scenario.load(path: file)) as? ScenarioError)
            XCTAssertEqual(error.problems, [.init(path: "signing_keys.directory",
                                                  message: "expected an existing directory of <kid>.pem files, found \"\(directory)\"")])
        }
        var twin = Scenario.default
        twin.signingKeys.directory = repositoryRoot + "/Keys/signing"
        try twin.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(try Scenario.load(path: file), twin)
    }

    func testServerStart_WithANamedMissingKeysDirectory_FailsInsteadOfGeneratingKeys_F9() throws {
        var scenario = Scenario.default
        scenario.signingKeys.directory = "/nonexistent/typo-keys"
        let error = assertThrows(try startMock { $0.keysDirectory = nil; $0.scenario = scenario })
        guard case .keys(.directoryMissing("/nonexistent/typo-keys"))? = error as? AppleIDMockError else { return XCTFail("\(String(describing: error))") }
    }

    func testBoundedFile_ChecksSizeBeforeReading_F10() throws {
        let directory = NSTemporaryDirectory() + "probe-f10-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let big = directory + "/big.json"
        XCTAssertTrue(FileManager.default.createFile(atPath: big, contents: nil))
        // A sparse 3 GB file: refused from its size alone (reading it would take seconds and gigabytes).
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: big))
        try handle.truncate(atOffset: 3 << 30)
        try handle.close()
        XCTAssertEqual(assertThrows(try BoundedFile.read(big, limit: 4 << 20)) as? BoundedFile.Failure,
                       BoundedFile.Failure(message: "expected at most 4194304 bytes, found 3221225472"))
        XCTAssertEqual((assertThrows(try Scenario.load(path: big)) as? ScenarioError)?.problems,
                       [.init(path: "$", message: "expected at most 33554432 bytes, found 3221225472")])
        XCTAssertEqual(assertThrows(try BoundedFile.read("/dev/zero", limit: 10)) as? BoundedFile.Failure,
                       BoundedFile.Failure(message: "cannot read file /dev/zero: not a regular file"))
        let exact = directory + "/exact"
        try Data(repeating: 65, count: 10).write(to: URL(fileURLWithPath: exact))
        XCTAssertEqual(try BoundedFile.read(exact, limit: 10), [UInt8](repeating: 65, count: 10))
        XCTAssertEqual(assertThrows(try BoundedFile.read(exact, limit: 9)) as? BoundedFile.Failure,
                       BoundedFile.Failure(message: "expected at most 9 bytes, found 10"))
        let pem = directory + "/W2ek7HdPaL.pem"
        try Data(repeating: 65, count: 100_000).write(to: URL(fileURLWithPath: pem))
        XCTAssertEqual(assertThrows(try KeyRing.load(count: 1, directory: directory, activeKeyID: nil)) as? KeyRingError,
                       .unreadable(pem, "expected at most 65536 bytes, found 100000"))
    }

    func testKeyIDsFromFileNames_AreValidated_F13() throws {
        let source = repositoryRoot + "/Keys/signing/W2ek7HdPaL.pem"
        for name in [".pem", "we\"ird<kid>&.pem", "ElevenChars.pem", "dash-kid.pem"] {
            let directory = NSTemporaryDirectory() + "probe-f13-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try FileManager.default.copyItem(atPath: source, toPath: directory + "/" + name)
            XCTAssertEqual(assertThrows(try KeyRing.load(count: 1, directory: directory, activeKeyID: nil)) as? KeyRingError,
                           .unreadable(directory + "/" + name, "file name: \(ScenarioRules.keyIDExpectation)"), name)
        }
        let directory = NSTemporaryDirectory() + "probe-f13-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.copyItem(atPath: source, toPath: directory + "/AIDOPK1.pem")
        XCTAssertEqual(try KeyRing.load(count: 1, directory: directory, activeKeyID: nil).activeKey.keyID, "AIDOPK1")
    }

    // MARK: - F4: big forms are parsed off the I/O threads, in linear time

    func testBigDuplicateForm_OnRevoke_IsAnsweredAndOthersAreServedMeanwhile_F4() throws {
        let server = try startMock { $0.http.eventLoopCount = 1 }
        defer { server.stop() }
        var body: [UInt8] = []
        var index = 0
        while body.count < 1_000_000 {
            body += Array("\(String(index, radix: 16))=&\(String(index, radix: 16))=&".utf8)
            index += 1
        }
        let big = try server.client()
        try big.request("POST", "/auth/revoke", headers: [("Content-Type", "application/x-www-form-urlencoded")], body: body)
        let other = try server.client()
        XCTAssertEqual(try other.roundTrip("GET", "/auth/keys").status, 200)
        let answer = try big.readResponse()
        XCTAssertEqual(answer.status, 400)
        XCTAssertEqual(answer.text, #"{"error":"invalid_request"}"#)
    }

    // MARK: - F12: the control API answers local, same-origin JSON callers only

    func testControlAPI_RefusesForeignHostOriginAndContentType_F12() throws {
        let server = try startMock { $0.allowedHosts = ["appleid-mock"] }
        defer { server.stop() }
        func idToken(_ headers: [(String, String)], host: String? = nil) throws -> RawHTTPResponse {
            let client = try server.client()
            var head = "POST /__mock/id-token HTTP/1.1\r\nHost: \(host ?? "localhost")\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            let body = #"{"user":"alice"}"#
            try client.send(head + "Content-Length: \(body.utf8.count)\r\n\r\n" + body)
            return try client.readResponse()
        }
        let json = [("Content-Type", "application/json")]
        let foreignHost = try idToken(json, host: "attacker.example")
        XCTAssertEqual(foreignHost.status, 403)
        XCTAssertEqual(foreignHost.text, #"{"error":"Host \"attacker.example\" is not allowed for the control API (allow a name with --allowed-host)","field":"Host"}"#)
        for host in ["localhost", "localhost:\(server.port)", "127.0.0.1:\(server.port)", "[::1]:\(server.port)", "10.1.2.3", "appleid-mock:8080", "APPLEID-MOCK"] {
            XCTAssertEqual(try idToken(json, host: host).status, 200, host)
        }
        for host in ["appleid-mock.evil.example", "localhost:80x", "[::1", "rebind.example:\(server.port)"] {
            XCTAssertEqual(try idToken(json, host: host).status, 403, host)
        }
        let crossOrigin = try idToken(json + [("Origin", "http://attacker.example")])
        XCTAssertEqual(crossOrigin.status, 403)
        XCTAssertEqual(crossOrigin.text, #"{"error":"cross-origin requests to the control API are refused","field":"Origin"}"#)
        XCTAssertEqual(try idToken(json + [("Origin", "null")]).status, 403)
        XCTAssertEqual(try idToken(json + [("Origin", "http://localhost")]).status, 200)
        let plain = try idToken([("Content-Type", "text/plain")])
        XCTAssertEqual(plain.status, 415)
        XCTAssertEqual(plain.text, #"{"error":"expected Content-Type: application/json","field":"Content-Type"}"#)
        XCTAssertEqual(try idToken([]).status, 415)
        XCTAssertEqual(try idToken([("Content-Type", "application/json; charset=utf-8")]).status, 200)
        // Apple's routes stay as Apple serves them.
        let keys = try server.client()
        try keys.send("GET /auth/keys HTTP/1.1\r\nHost: attacker.example\r\nOrigin: http://attacker.example\r\n\r\n")
        XCTAssertEqual(try keys.readResponse().status, 200)
    }
}

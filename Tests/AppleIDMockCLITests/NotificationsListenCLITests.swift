import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// `appleid-mock notifications listen` as a process: a mock delivers every event
/// type to the listener, which verifies and prints each; tampered twins are REJECTED with a 400.
final class NotificationsListenCLITests: XCTestCase {
    private var directory = ""
    private var processes: [CLIProcess.Server] = []

    override func setUpWithError() throws {
        directory = NSTemporaryDirectory() + "cli-listen-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for process in processes { process.stop() }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts `appleid-mock arguments…`, stopped at tear-down if still running.
    private func start(_ arguments: [String]) throws -> (CLIProcess.Server, Int) {
        let process = try CLIProcess.Server(arguments)
        processes.append(process)
        return (process, try XCTUnwrap(process.port, process.firstLine))
    }

    /// A mock on `port` whose app group sends its notifications to `url`.
    private func startMock(port: Int, notificationURL: String, retryDelays: [Int]? = nil) throws {
        var scenario = Scenario.default
        scenario.teams[0].notificationURL = notificationURL
        if let retryDelays { scenario.compatibility.notificationRetryDelays = retryDelays }
        let file = directory + "/scenario.json"
        try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
        let (_, bound) = try start(["serve", "--port", "\(port)", "--scenario", file])
        XCTAssertEqual(bound, port)
    }

    /// `POST /__mock/events`; returns the notification id.
    private func fire(_ type: String, user: String, mock: Int) throws -> Int64 {
        let body = #"{"type":"\#(type)","user":"\#(user)","client_id":"com.example.app"}"#
        let answer = try RawHTTPClient(port: mock).roundTrip("POST", "/__mock/events", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        XCTAssertEqual(answer.status, 202, answer.text)
        return try XCTUnwrap(JSONParser.parse(answer.body).objectValue?["notification"]?.intValue, answer.text)
    }

    /// The delivery record of notification `id`, once settled (the mock holds the request until a
    /// notification after `id - 1` settles: call it with no later one in flight).
    private func settled(_ id: Int64, mock: Int) throws -> JSONObject {
        let answer = try RawHTTPClient(port: mock, timeout: 70).roundTrip("GET", "/__mock/notifications?after=\(id - 1)&wait=60")
        let records = try XCTUnwrap(JSONParser.parse(answer.body).objectValue?["notifications"]?.arrayValue, answer.text)
        return try XCTUnwrap(records.compactMap(\.objectValue).first { $0["id"]?.intValue == id }, answer.text)
    }

    private func signIn(_ user: String, mock: Int) throws {
        let result = try CLIProcess.run(["sign-in", "--user", user, "--client", "com.example.app", "--server", "http://127.0.0.1:\(mock)"])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    func testNotificationsListen_VerifiesAndPrintsEveryEventType_AndTheMockLogsDelivered() throws {
        let mock = try CLIProcess.unusedPort()
        let (listener, port) = try start(["notifications", "listen", "--port", "0", "--server", "http://127.0.0.1:\(mock)",
                                          "--client-id", "com.example.app", "--path", "/apple", "--count", "4"])
        XCTAssertEqual(listener.firstLine, "listening on http://127.0.0.1:\(port)")
        try startMock(port: mock, notificationURL: "http://127.0.0.1:\(port)/apple")
        try signIn("alice", mock: mock)
        try signIn("bob", mock: mock)
        var subs: [String] = []
        // One at a time, so that each is the only one in flight when awaited, and lines come in order.
        for (type, user) in [("consent-revoked", "alice"), ("email-disabled", "bob"), ("email-enabled", "bob"), ("account-delete", "bob")] {
            let record = try settled(try fire(type, user: user, mock: mock), mock: mock)
            XCTAssertEqual(record["outcome"], "delivered", "\(record)")
            subs.append(record["event"]?.objectValue?["sub"]?.stringValue ?? "")
        }
        // --count 4: it exits on its own once the fourth is verified and answered.
        let (status, rest, stderr) = listener.waitForExit()
        XCTAssertEqual(status, 0, stderr)
        let lines = rest.split(separator: "\n").map(String.init)
        let expected = [("consent-revoked", subs[0], ""), ("email-disabled", subs[1], " email=\\S+@privaterelay\\.appleid\\.com is_private_email=true"),
                        ("email-enabled", subs[2], " email=\\S+@privaterelay\\.appleid\\.com is_private_email=true"), ("account-deleted", subs[3], "")]
        XCTAssertEqual(lines.count, 4, rest)
        for ((type, sub, email), line) in zip(expected, lines) {
            let pattern = "^\(type) sub=\(NSRegularExpression.escapedPattern(for: sub)) aud=com\\.example\\.app event_time=[0-9]{13}\(email) verified kid=W2ek7HdPaL$"
            XCTAssertNotNil(line.range(of: pattern, options: .regularExpression), "\(line) !~ \(pattern)")
        }
    }

    func testNotificationsListen_RejectsAWrongAudienceWith400_SoTheMockLogsTheFailure() throws {
        let mock = try CLIProcess.unusedPort()
        let (listener, port) = try start(["notifications", "listen", "--port", "0", "--server", "http://127.0.0.1:\(mock)", "--client-id", "com.example.other"])
        try startMock(port: mock, notificationURL: "http://127.0.0.1:\(port)/", retryDelays: [])
        try signIn("alice", mock: mock)
        let record = try settled(try fire("consent-revoked", user: "alice", mock: mock), mock: mock)
        XCTAssertEqual(record["outcome"], "failed", "\(record)")
        XCTAssertEqual(record["attempts"]?.arrayValue?.first?.objectValue?["status"], .int(400), "\(record)")
        let (status, rest, _) = listener.stop()
        XCTAssertEqual(status, 0)
        XCTAssertEqual(rest, "REJECTED aud is com.example.app, expected com.example.other (--client-id)\n")
    }

    /// JWTs crafted in the test and posted straight to the listener: each tampered twin is
    /// REJECTED with its reason and a 400; the untampered one, dated by the mock's clock (moved
    /// to 2030, where real time would call it not yet valid), is verified.
    func testNotificationsListen_RejectsEachTamperedTwin_AndVerifiesTheGenuineOne() throws {
        let (_, mock) = try start(["serve", "--port", "0"])
        // Frozen, then moved: the reasons name the mock's now, which must not tick during the test.
        let frozen = try CLIProcess.run(["clock", "freeze", "--server", "http://127.0.0.1:\(mock)"])
        XCTAssertEqual(frozen.status, 0, frozen.stderr)
        let moved = try CLIProcess.run(["clock", "set", "2030-01-01T00:00:00Z", "--server", "http://127.0.0.1:\(mock)"])
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertTrue(moved.stdout.contains("frozen"), moved.stdout)
        let (listener, port) = try start(["notifications", "listen", "--port", "0", "--server", "http://127.0.0.1:\(mock)",
                                          "--client-id", "com.example.app", "--count", "2", "--json"])
        let signing = try RSAPrivateKey(pem: String(contentsOfFile: CLIProcess.root + "/Keys/signing/W2ek7HdPaL.pem", encoding: .utf8))
        let now: Int64 = 1_893_456_000
        func claims(_ change: (inout JSONObject) -> Void = { _ in }) -> [UInt8] {
            var claims: JSONObject = ["iss": "https://appleid.apple.com", "aud": "com.example.app", "iat": .int(now), "exp": .int(now + 86_400),
                                      "jti": "j1", "events": #"{"type":"consent-revoked","sub":"001234.abcd.0001","event_time":1893456000000}"#]
            change(&claims)
            return JSONWriter.compact(.object(claims))
        }
        func body(_ jwt: String) -> [UInt8] { Array(#"{"payload":"\#(jwt)"}"#.utf8) }
        func signed(_ payload: [UInt8], kid: String = "W2ek7HdPaL", key: RSAPrivateKey? = nil) throws -> [UInt8] {
            body(try CompactJWS.signRS256(payload: payload, kid: kid, key: key ?? signing).compact)
        }
        let genuine = try CompactJWS.signRS256(payload: claims(), kid: "W2ek7HdPaL", key: signing)
        let twins: [(String, [UInt8])] = [
            ("signature does not verify with kid W2ek7HdPaL from http://127.0.0.1:\(mock)/auth/keys", try signed(claims(), key: try RSAPrivateKey.generate())),
            ("kid Unknown123 is not published at http://127.0.0.1:\(mock)/auth/keys", try signed(claims(), kid: "Unknown123")),
            ("aud is com.example.web, expected com.example.app (--client-id)", try signed(claims { $0["aud"] = "com.example.web" })),
            ("iss is \"https://evil.example\", expected https://appleid.apple.com (--issuer)", try signed(claims { $0["iss"] = "https://evil.example" })),
            ("expired: exp 1893455999 is not after the mock's now \(now)", try signed(claims { $0["iat"] = .int(now - 86_401); $0["exp"] = .int(now - 1) })),
            ("iat \(now + 3600) is after the mock's now \(now)", try signed(claims { $0["iat"] = .int(now + 3600); $0["exp"] = .int(now + 7200) })),
            ("events (consent-revoked) has no sub", try signed(claims { $0["events"] = .object(["type": "consent-revoked"]) })),
            ("alg is HS256, expected RS256", body("eyJhbGciOiJIUzI1NiJ9." + genuine.payloadSegment + "." + Base64URL.encode(genuine.signature))),
            (#"body is not {"payload": "<JWT>"}"#, Array(#"{"jwt":"x"}"#.utf8)),
        ]
        for (reason, twin) in twins {
            let answer = try RawHTTPClient(port: port).roundTrip("POST", "/", headers: [("Content-Type", "application/json")], body: twin)
            XCTAssertEqual(answer.status, 400, reason)
            XCTAssertEqual(answer.text, "rejected: \(reason)\n")
        }
        // GET is not a notification: 405, and nothing printed.
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("GET", "/").status, 405)
        let accepted = try RawHTTPClient(port: port).roundTrip("POST", "/any/path", headers: [("Content-Type", "application/json")], body: body(genuine.compact))
        XCTAssertEqual(accepted.status, 200, accepted.text)
        // events as an object (events_claim_format "object", Apple's examples) verifies too.
        let asObject = try signed(claims { $0["events"] = .object(["type": "email-disabled", "sub": "001234.abcd.0001", "email": "x@privaterelay.appleid.com"]) })
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("POST", "/", headers: [("Content-Type", "application/json")], body: asObject).status, 200)
        let (status, rest, stderr) = listener.waitForExit()
        XCTAssertEqual(status, 0, stderr)
        let lines = rest.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.dropLast(2), twins.map { reason, _ in String(decoding: JSONWriter.sortedCompact(.object(["reason": .string(reason), "verified": false])), as: UTF8.self) })
        let verified = try lines.suffix(2).map { try XCTUnwrap(JSONParser.parse(Array($0.utf8)).objectValue, rest) }
        XCTAssertEqual(verified.map { $0["verified"] }, [true, true])
        XCTAssertEqual(verified.map { $0["kid"] }, ["W2ek7HdPaL", "W2ek7HdPaL"])
        XCTAssertEqual(verified.map { $0["events_claim_format"] }, ["string", "object"])
        XCTAssertEqual(verified.map { $0["event"]?.objectValue?["type"] }, ["consent-revoked", "email-disabled"])
        XCTAssertEqual(verified.first?["event"]?.objectValue?["sub"], "001234.abcd.0001")
    }

    func testNotificationsListen_RejectsBadFlagsWithExitTwoNamingTheFlag() throws {
        let cases: [([String], String)] = [
            (["--port", "x"], "--port expects an integer from 0 to 65535, got \"x\""),
            (["--count", "0"], "--count expects an integer from 1 to 1000000, got \"0\""),
            (["--path", "apple"], "--path expects an absolute path such as /apple/notifications, got \"apple\""),
            (["--host", "example.com"], "--host expects an IPv4 or IPv6 address or localhost, got \"example.com\""),
            (["--server", "ftp://x"], "--server expects an absolute http(s) URL, got \"ftp://x\""),
            (["--issuer", "nope"], "--issuer expects an absolute URL, got \"nope\""),
            (["--client-id", ""], "--client-id expects a client id, got \"\""),
            (["--bogus"], "unknown option --bogus"),
            (["--json=yes"], "--json takes no value"),
            (["extra"], "unexpected argument \"extra\""),
        ]
        for (arguments, message) in cases {
            let result = try CLIProcess.run(["notifications", "listen"] + arguments)
            XCTAssertEqual(result.status, 2, "\(arguments)")
            XCTAssertEqual(result.stderr.split(separator: "\n").first.map(String.init), "appleid-mock: \(message)", "\(arguments)")
            XCTAssertEqual(result.stdout, "", "\(arguments)")
        }
        XCTAssertEqual(try CLIProcess.run(["notifications", "watch"]).stderr.split(separator: "\n").first, "appleid-mock: unknown notifications command \"watch\"")
        XCTAssertEqual(try CLIProcess.run(["notifications"]).status, 2)
        // The twin: help is not an error.
        let help = try CLIProcess.run(["notifications", "listen", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: appleid-mock notifications listen"), help.stdout)
    }

    func testNotificationsListen_StopsWithExitZeroOnSIGINT_AndNamesAPortInUse() throws {
        let (first, port) = try start(["notifications", "listen", "--port", "0"])
        let second = try CLIProcess.run(["notifications", "listen", "--port", "\(port)"])
        XCTAssertEqual(second.status, 1)
        XCTAssertEqual(second.stderr, "appleid-mock: cannot listen on 127.0.0.1:\(port): Address already in use (errno 98)\n")
        let (status, rest, stderr) = first.stop(signal: SIGINT)
        XCTAssertEqual(status, 0, stderr)
        XCTAssertEqual(rest, "")
    }
}

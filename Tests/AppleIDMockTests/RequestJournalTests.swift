@testable import AppleIDMock
import Dispatch
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The request journal (issue 21 item 2) over real sockets: what a backend sent Apple, in order,
/// with its fields, what the mock answered and why, and the events each request caused; the
/// journal's filters, bounds and long poll; MiniHTTP's own answers in it.
final class RequestJournalTests: XCTestCase {
    /// `GET path` answered 200 with a JSON object.
    private func journal(_ server: AppleIDMockServer, _ query: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> JSONObject {
        let response = try server.get("/__mock/requests" + (query.isEmpty ? "" : "?" + query))
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try jsonObject(response.body, file: file, line: line)
    }

    private func entries(_ server: AppleIDMockServer, _ query: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> [JSONObject] {
        try XCTUnwrap(journal(server, query, file: file, line: line)["requests"]?.arrayValue, file: file, line: line).compactMap(\.objectValue)
    }

    private func count(_ server: AppleIDMockServer, _ query: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int64? {
        let response = try server.get("/__mock/requests/count?" + query)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try jsonObject(response.body, file: file, line: line)["count"]?.intValue
    }

    /// The consent page's hidden fields plus alice's choice, posted back as the browser does.
    private func browserSignIn(_ server: AppleIDMockServer) throws -> [(String, String)] {
        let parameters = [("client_id", "com.example.web"), ("redirect_uri", webRedirect), ("response_type", "code"),
                          ("response_mode", "form_post"), ("scope", "name email"), ("state", "st-1"), ("nonce", "n-1")]
        let page = try server.authorizePage(parameters)
        XCTAssertEqual(page.status, 200, page.text)
        let decided = try server.postForm("/auth/authorize", hiddenFields(page.text) + [("mock_user", "alice"), ("mock_action", "continue")])
        XCTAssertEqual(decided.status, 200, decided.text)
        return hiddenFields(decided.text)
    }

    func testJournal_ListsABackendsCallsInOrder_WithTheirFieldsAnswersAndEvents() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let delivered = try browserSignIn(server)
        let code = try XCTUnwrap(delivered.first { $0.0 == "code" }?.1)
        let secret = try server.secret()
        let exchanged = try server.redeem(code, secret: secret)
        XCTAssertEqual(exchanged.status, 200, exchanged.text)
        let refreshToken = try XCTUnwrap(try jsonObject(exchanged.body)["refresh_token"]?.stringValue)
        XCTAssertEqual(try server.refresh(refreshToken).status, 200)
        XCTAssertEqual(try server.revoke(refreshToken).status, 200)

        let answer = try server.get("/__mock/requests?control=false")
        XCTAssertEqual(answer.status, 200)
        // The client_secret's signature is never shown, anywhere in the answer.
        let signature = String(secret.split(separator: ".")[2])
        XCTAssertFalse(answer.text.contains(signature))
        XCTAssertFalse(answer.text.contains(secret))
        let list = try XCTUnwrap(try jsonObject(answer.body)["requests"]?.arrayValue).compactMap(\.objectValue)
        XCTAssertEqual(list.map { "\($0["method"]?.stringValue ?? "-") \($0["path"]?.stringValue ?? "-") \($0["status"]?.intValue ?? 0)" },
                       ["GET /auth/authorize 200", "POST /auth/authorize 200", "POST /auth/token 200", "POST /auth/token 200", "POST /auth/revoke 200"])
        XCTAssertEqual(list.map { $0["id"]?.intValue ?? 0 }, [1, 2, 3, 4, 5])
        XCTAssertEqual(list[0]["query"]?.objectValue?["redirect_uri"], .string(webRedirect))
        XCTAssertEqual(list[0]["client_id"], "com.example.web")
        XCTAssertEqual(list[0]["route"], "/auth/authorize")

        let exchange = list[2]
        XCTAssertEqual(exchange["grant_type"], "authorization_code")
        XCTAssertEqual(exchange["client_id"], "com.example.web")
        XCTAssertEqual(exchange["form"]?.objectValue?["redirect_uri"], .string(webRedirect))
        XCTAssertEqual(exchange["form"]?.objectValue?["code"], .string(code))
        XCTAssertNil(exchange["form"]?.objectValue?["client_secret"], "the secret appears decoded only")
        let decoded = try XCTUnwrap(exchange["client_secret"]?.objectValue)
        XCTAssertEqual(decoded["header"]?.objectValue?["kid"], "MOCKKEY001")
        XCTAssertEqual(decoded["header"]?.objectValue?["alg"], "ES256")
        XCTAssertEqual(decoded["claims"]?.objectValue?["iss"], "MOCKTEAM01")
        XCTAssertEqual(decoded["claims"]?.objectValue?["sub"], "com.example.web")
        XCTAssertEqual(decoded["claims"]?.objectValue?["iat"]?.intValue, frozenNow)
        XCTAssertEqual(exchange["error"], .null)
        XCTAssertEqual(exchange["reason"], .null)
        XCTAssertEqual(exchange["peer"]?.stringValue?.hasPrefix("127.0.0.1:"), true)
        XCTAssertEqual(exchange["tls"], false)
        XCTAssertEqual(exchange["control"], false)
        XCTAssertEqual(exchange["response_bytes"]?.intValue, Int64(exchanged.body.count))
        XCTAssertEqual(list[3]["grant_type"], "refresh_token")
        XCTAssertEqual(list[4]["form"]?.objectValue?["token"], .string(refreshToken))

        // Each request names the events it caused, and they are those events.
        let events = try jsonObject(try server.get("/__mock/events").body)["events"]?.arrayValue?.compactMap(\.objectValue) ?? []
        func types(_ entry: JSONObject) -> [String] {
            let sequences = entry["events"]?.arrayValue?.compactMap(\.intValue) ?? []
            return sequences.compactMap { sequence in events.first { $0["sequence"]?.intValue == sequence }?["type"]?.stringValue }
        }
        XCTAssertEqual(types(list[0]), [], "showing the consent page changes nothing")
        XCTAssertEqual(types(list[1]), ["consent-granted", "code-issued"])
        XCTAssertEqual(types(list[2]), ["code-redeemed", "tokens-issued"])
        XCTAssertEqual(types(list[3]), ["tokens-issued"])
        XCTAssertEqual(types(list[4]), ["consent-revoked"])
    }

    func testCount_AnswersExactlyOnce_ThenTwiceAfterASecondExchange() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        XCTAssertEqual(try server.redeem(try server.webCode()).status, 200)
        let query = "path=/auth/token&grant_type=authorization_code&status=200"
        XCTAssertEqual(try count(server, query), 1)
        XCTAssertEqual(try count(server, "path=/auth/token&grant_type=refresh_token"), 0)
        XCTAssertEqual(try count(server, "method=POST&path=/__mock/authorize&control=true"), 1)
        XCTAssertEqual(try server.redeem(try server.webCode()).status, 200)
        XCTAssertEqual(try count(server, query), 2)
        XCTAssertEqual(try count(server, "path=/auth/token&status=2xx&client_id=com.example.web"), 2)
        XCTAssertEqual(try count(server, "path=/auth/token&client_id=com.example.other"), 0)
    }

    func testRefusal_CarriesApplesErrorCode_AndTheReasonTheLogLineGives() throws {
        let lines = LogCapture()
        let server = try startFrozenMock { $0.log = lines.sink }
        defer { server.stop() }
        let refused = try server.redeem("c0000000000000000000000000000000.0.abcd.AAAAAAAAAAAAAAAAAAAAAA")
        XCTAssertEqual(refused.status, 400)
        let entry = try XCTUnwrap(try entries(server, "path=/auth/token").first)
        XCTAssertEqual(entry["status"]?.intValue, 400)
        XCTAssertEqual(entry["error"], "invalid_grant")
        let reason = try XCTUnwrap(entry["reason"]?.stringValue)
        XCTAssertFalse(refused.text.contains(reason), "Apple's answer never carries the reason")
        XCTAssertEqual(lines.take().filter { $0.contains("refused POST /auth/token: invalid_grant — \(reason)") }.count, 1)
        // A success carries neither.
        XCTAssertEqual(try server.redeem(try server.webCode()).status, 200)
        let success = try XCTUnwrap(try entries(server, "path=/auth/token&status=200").first)
        XCTAssertEqual(success["error"], .null)
        XCTAssertEqual(success["reason"], .null)
    }

    func testMiniHTTPsOwn400And431_AreJournaled_WithTheirReason() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let garbled = try server.client()
        try garbled.send("NOT A REQUEST\r\n\r\n")
        XCTAssertEqual(try garbled.readResponse().status, 400)
        let huge = try server.client()
        try huge.send("GET /auth/keys HTTP/1.1\r\nHost: localhost\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        XCTAssertEqual(try huge.readResponse().status, 431)
        let list = try entries(server)
        XCTAssertEqual(list.map { $0["status"]?.intValue ?? 0 }, [400, 431])
        for entry in list {
            XCTAssertEqual(entry["method"], .null)
            XCTAssertEqual(entry["path"], .null)
            XCTAssertEqual(entry["route"], .null)
            XCTAssertEqual(entry["reason"]?.stringValue?.hasPrefix("unparsable request: "), true, "\(entry)")
        }
        XCTAssertEqual(try count(server, "status=4xx"), 2)
        XCTAssertEqual(try count(server, "status=431"), 1)
    }

    func testBadFilters_AreRefusedNamingTheField_AndTheirTwinsAccepted() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let cases: [(bad: String, good: String, field: String)] = [
            ("status=abc", "status=400", "status"), ("status=600", "status=5xx", "status"), ("limit=-1", "limit=1", "limit"),
            ("limit=1001", "limit=1000", "limit"), ("after=-1", "after=0", "after"), ("control=yes", "control=true", "control"),
            ("method=post", "method=POST", "method"), ("path=auth", "path=/auth", "path"), ("wait=61", "wait=0", "wait"),
            ("colour=red", "client_id=x", "colour"),
        ]
        for (bad, good, field) in cases {
            let refused = try server.get("/__mock/requests?" + bad)
            XCTAssertEqual(refused.status, 400, bad)
            XCTAssertEqual(try jsonObject(refused.body)["field"], .string(field), bad)
            XCTAssertEqual(try server.get("/__mock/requests?" + good).status, 200, good)
        }
        let countRefused = try server.get("/__mock/requests/count?limit=1")
        XCTAssertEqual(countRefused.status, 400, "count takes no page size")
        XCTAssertEqual(try jsonObject(countRefused.body)["field"], "limit")
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/requests?all=1").status, 400)
    }

    func testJournal_KeepsTheNewestOfItsCapacity_SaysHowManyWereMissed_AndClearsOnDelete() throws {
        let server = try startFrozenMock { $0.scenario.journalCapacity = 3 }
        defer { server.stop() }
        for _ in 0..<5 { XCTAssertEqual(try server.get("/auth/keys").status, 200) }
        let page = try journal(server)
        XCTAssertEqual(page["requests"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.intValue }, [3, 4, 5])
        XCTAssertEqual(page["missed"]?.intValue, 2)
        XCTAssertEqual(page["last"]?.intValue, 5)
        XCTAssertEqual(try journal(server, "after=3")["missed"]?.intValue, 0)
        // No after can overflow the arithmetic (schemathesis found the event feed's did).
        let far = try journal(server, "after=18446744073709551615")
        XCTAssertEqual(far["requests"]?.arrayValue, [])
        XCTAssertEqual(far["missed"]?.intValue, 0)
        XCTAssertEqual(try count(server, "after=18446744073709551615"), 0)
        XCTAssertEqual(try journal(server, "after=3&limit=1")["requests"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.intValue }, [4])
        // Reading the journal is not journaled.
        XCTAssertEqual(try count(server, "path=/__mock/requests"), 0)
        let cleared = try server.client().roundTrip("DELETE", "/__mock/requests")
        XCTAssertEqual(cleared.status, 200)
        XCTAssertEqual(try jsonObject(cleared.body)["cleared"]?.intValue, 3)
        XCTAssertEqual(try entries(server, "after=5"), [])
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(try entries(server, "after=5").compactMap { $0["id"]?.intValue }, [6], "ids go on after a clear")
    }

    func testABodyPastItsBound_IsKeptOnlyToTheBound() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let long = String(repeating: "x", count: 10_000)
        XCTAssertEqual(try server.postForm("/auth/token", [("client_id", "com.example.web"), ("grant_type", "refresh_token"), ("pad", long)]).status, 400)
        let entry = try XCTUnwrap(try entries(server).first)
        XCTAssertEqual(entry["body_truncated"], true)
        XCTAssertEqual(entry["client_id"], "com.example.web")
        let pad = try XCTUnwrap(entry["form"]?.objectValue?["pad"]?.stringValue)
        XCTAssertLessThan(pad.utf8.count, 4096)
        XCTAssertEqual(try server.postForm("/auth/token", [("client_id", "com.example.web")]).status, 400)
        XCTAssertEqual(try entries(server, "after=1").first?["body_truncated"], false)
    }

    func testJSONBodies_AreShownAsText_AndTheAuthorizationHeaderIsNot() throws {
        let server = try startFrozenMock { $0.controlToken = "s3cret-token-value" }
        defer { server.stop() }
        let signIn = try server.client().roundTrip("POST", "/__mock/sign-in",
                                                   headers: [("Content-Type", "application/json"), ("Authorization", "Bearer s3cret-token-value"),
                                                             ("Proxy-Authorization", "Basic cHJveHk6c2VjcmV0"), ("X-Other", "shown")],
                                                   body: Array(#"{"user":"alice","client_id":"com.example.app"}"#.utf8))
        XCTAssertEqual(signIn.status, 200, signIn.text)
        let answer = try server.client().roundTrip("GET", "/__mock/requests", headers: [("Authorization", "Bearer s3cret-token-value")])
        XCTAssertEqual(answer.status, 200)
        XCTAssertFalse(answer.text.contains("s3cret-token-value"))
        let entry = try XCTUnwrap(try jsonObject(answer.body)["requests"]?.arrayValue?.first?.objectValue)
        XCTAssertEqual(entry["body"], #"{"user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(entry["form"], .null)
        XCTAssertEqual(entry["client_id"], "com.example.app")
        XCTAssertEqual(entry["control"], true)
        XCTAssertEqual(entry["headers"]?.objectValue?["authorization"], "[not shown]")
        XCTAssertEqual(entry["headers"]?.objectValue?["proxy-authorization"], "[not shown]")
        XCTAssertFalse(answer.text.contains("cHJveHk6c2VjcmV0"))
        XCTAssertEqual(entry["headers"]?.objectValue?["x-other"], "shown", "the twin: another header is shown")
        XCTAssertEqual(entry["events"]?.arrayValue?.isEmpty, false, "a first sign-in grants consent")
        // The journal is part of the control API: the token guards it.
        XCTAssertEqual(try server.get("/__mock/requests").status, 401)
    }

    func testAMalformedClientSecret_IsShownAsMalformed() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        _ = try server.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", "not-a-jwt"), ("grant_type", "refresh_token")])
        _ = try server.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", "e30.%%%.c2ln"), ("grant_type", "refresh_token")])
        let list = try entries(server)
        XCTAssertEqual(list.first?["client_secret"], .object(["malformed": "not a JWS: 1 part separated by dots, not 3"]))
        XCTAssertEqual(list.last?["client_secret"], .object(["malformed": "its claims are not a base64url-encoded JSON object"]))
    }

    func testALongPoll_AnswersWithTheNextMatchingRequest() async throws {
        let server = try startFrozenMock()
        let port = server.port
        let poll = Task.detached {
            try RawHTTPClient(port: port, timeout: 30).roundTrip("GET", "/__mock/requests?wait=20&path=/auth/revoke")
        }
        // Not this one: the poll waits for a revoke.
        let held = try await eventually { server.assembly.journal?.waitingReaders != 0 }
        XCTAssertTrue(held, "the poll never parked")
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        XCTAssertEqual(try server.revoke("r-unknown").status, 200)
        let answer = try await poll.value
        XCTAssertEqual(answer.status, 200)
        let list = try XCTUnwrap(try jsonObject(answer.body)["requests"]?.arrayValue)
        XCTAssertEqual(list.compactMap { $0.objectValue?["path"]?.stringValue }, ["/auth/revoke"])
        await server.stop()
    }

    func testWithTheJournalOff_ItsRoutesAnswer409_AndAppleStillAnswers() throws {
        let server = try startFrozenMock { $0.journal = false }
        defer { server.stop() }
        XCTAssertEqual(try server.get("/auth/keys").status, 200)
        for (method, target) in [("GET", "/__mock/requests"), ("GET", "/__mock/requests/count"), ("DELETE", "/__mock/requests")] {
            let answer = try server.client().roundTrip(method, target)
            XCTAssertEqual(answer.status, 409, target)
            XCTAssertEqual(try jsonObject(answer.body)["error"], "the request journal is off (serve --journal off)")
        }
        XCTAssertEqual(server.requests().count, 0)
    }

    func testTheSwiftAPI_ListsWhatTheHTTPJournalLists() async throws {
        let server = try startFrozenMock()
        XCTAssertEqual(try server.redeem(try server.webCode()).status, 200)
        let exchanges = server.requests(matching: RequestFilter(path: "/auth/token", grantType: "authorization_code"))
        XCTAssertEqual(exchanges.count, 1)
        XCTAssertEqual(exchanges.first?.form?["redirect_uri"], webRedirect)
        XCTAssertEqual(exchanges.first?.status, .ok)
        guard case .decoded(_, let claims)? = exchanges.first?.clientSecret else { return XCTFail("no decoded secret") }
        XCTAssertEqual(claims["sub"], "com.example.web")
        XCTAssertEqual(server.requests(matching: RequestFilter(control: true)).map(\.path), ["/__mock/authorize"])
        XCTAssertEqual(server.requests(matching: RequestFilter(status: .statusClass(4))).count, 0)
        let waited = await server.requests(matching: RequestFilter(path: "/auth/token"), waitingUpTo: .seconds(5))
        XCTAssertEqual(waited.count, 1, "a match already there answers at once")
        XCTAssertEqual(server.clearRequests(), 2)
        XCTAssertEqual(server.requests().count, 0)
        await server.stop()
    }

    func testRecordingFromManyThreadsAtOnce_KeepsExactlyTheNewestIDs() {
        let journal = RequestJournal(capacity: 1000, realTime: { 1_700_000_000 })
        let exchange = HTTPExchange(id: 0, request: HTTPRequest(method: .get, target: "/auth/keys"), status: .ok)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<625 { journal.observe(exchange) }
        }
        let page = journal.entries(matching: RequestFilter())
        XCTAssertEqual(page.entries.map(\.id), Array(4001...5000), "the newest 1,000, in order, none missing")
        XCTAssertEqual(page.missed, 4000)
        XCTAssertEqual(journal.entries(matching: RequestFilter(after: 4990)).entries.map(\.id), Array(4991...5000))
        XCTAssertEqual(journal.clear(), 1000)
        XCTAssertEqual(journal.entries(matching: RequestFilter()).entries.count, 0)
        XCTAssertEqual(journal.entries(matching: RequestFilter()).missed, 5000, "a clear leaves nothing kept")
    }

    func testTheInMemoryMock_JournalsWhatItAnswers() async throws {
        let mock = try AppleIDMockServer.inMemory()
        let answer = await mock.respond(.get, "/auth/keys")
        XCTAssertEqual(answer.status, .ok)
        _ = await mock.respond(.post, "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array("client_id=x".utf8))
        let list = mock.requests()
        XCTAssertEqual(list.map(\.path), ["/auth/keys", "/auth/token"])
        XCTAssertEqual(list.last?.error, "invalid_client")
        XCTAssertNil(list.first?.peer)
        await mock.stop()
    }
}

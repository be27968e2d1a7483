@testable import AppleIDMock
import Foundation
import Glibc
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Abusive clients against the live mock over real sockets: slowloris, half-closes, connection
/// floods, oversized input and random bytes. Every test checks three things besides the abuse
/// itself: other clients are answered correctly during and after it, the process's descriptors
/// (`/proc/self/fd`: server and test clients share the process) return to the count before it,
/// and no state is lost (a refresh token still refreshes, a code issued before redeems exactly
/// once, the consent is unchanged). Timeouts are short (0.5 s); waits are bounded polls, and
/// nothing asserts on how long anything took.
final class FaultToleranceTests: XCTestCase {
    private var server: AppleIDMockServer!
    private var witness: Witness!

    override func setUpWithError() throws {
        server = try startFrozenMock { configuration in
            configuration.http = .testing(timeouts: 0.5)
            // A byte-stable key set, so "answered correctly" can compare exact bytes.
            configuration.scenario.compatibility.shuffleKeys = false
        }
        witness = try Witness.capture(server)
    }

    override func tearDown() {
        server?.stop()
        server = nil
        witness = nil
    }

    // MARK: - Slowloris

    func testSlowloris_DrippedHeadsAndBodies_Answered408AndClosed_WhileOthersAreServed() throws {
        // Heads dripped one byte at a time: the header timeout (from the first byte) ends them,
        // however steadily they drip.
        var drippers = try (0..<6).map { index -> RawHTTPClient in
            let client = try server.client()
            try client.send(index % 2 == 0 ? "POST /auth/token HTTP/1.1\r\nHost: x\r\nX-Drip: " : "POST /__mock/authorize HTTP/1.1\r\nX-Drip: ")
            return client
        }
        // Bodies dripped after a complete head: the request timeout ends them.
        for _ in 0..<2 {
            let client = try server.client()
            try client.send("POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 4096\r\n\r\ngrant_type=")
            drippers.append(client)
        }
        // Twin: a head sent in pieces promptly is answered.
        let prompt = try server.client()
        try prompt.send("GET /auth/ke")
        try prompt.send("ys HTTP/1.1\r\nHost: x\r")
        try prompt.send("\n\r\n")
        XCTAssertEqual(try prompt.readResponse().raw, witness.keys)
        prompt.close()

        var answered = [Bool](repeating: false, count: drippers.count)
        for round in 0..<400 where answered.contains(false) {
            if round == 2 { try assertServesOthers() }
            for (index, client) in drippers.enumerated() where !answered[index] {
                if Self.readable(client, milliseconds: 0) {
                    answered[index] = true
                } else if (try? client.send("a")) == nil {
                    answered[index] = true
                }
            }
            usleep(25_000)
        }
        XCTAssertEqual(answered, [Bool](repeating: true, count: drippers.count), "a dripping client was never cut off")
        for client in drippers {
            XCTAssertEqual(try client.readResponse().rawText, Self.protocolError(408))
            XCTAssertTrue(try client.waitForClose())
            client.close()
        }
        drippers.removeAll()
        try assertRecovered()
    }

    // MARK: - Half-closed sockets

    func testHalfClose_FullRequestThenShutdown_GetsFullAnswerThenClose() throws {
        let client = try server.client()
        try client.send(try redeemRequest(try server.webCode()))
        client.shutdownWrite()
        try Self.assertClosingTokenAnswer(try client.readResponse(), keys: Self.codeKeys)
        XCTAssertTrue(try client.waitForClose())
        client.close()
        try assertRecovered()
    }

    func testHalfClose_MidHeadOrMidBodyOrSilent_ClosedWithoutAnswer_AndCodeNotConsumed() throws {
        let code = try server.webCode()
        let full = try redeemRequest(code)
        let headEnd = try XCTUnwrap(Self.find(Array("\r\n\r\n".utf8), in: full)) + 4
        // Twin: the same request, complete and still open, is answered on a live connection.
        let complete = try server.client()
        try complete.send(try redeemRequest(try server.webCode()))
        try assertTokenAnswer(try complete.readResponse(), keys: Self.codeKeys)
        XCTAssertEqual(try complete.roundTrip("GET", "/auth/keys").raw, witness.keys, "keep-alive after an answer")
        complete.close()

        for cut in [0, 20, headEnd - 1, headEnd + 10, full.count - 1] {
            let client = try server.client()
            if cut > 0 { try client.send(Array(full[0..<cut])) }
            client.shutdownWrite()
            XCTAssertEqual(try client.readAll(), [], "answered a request cut at \(cut) of \(full.count) bytes")
            client.close()
        }
        // The cut-off requests did not redeem the code: it redeems now, exactly once.
        try assertTokenAnswer(try server.redeem(code), keys: Self.codeKeys)
        assertAppleError(try server.redeem(code), Self.usedCode)
        try assertRecovered()
    }

    func testHalfClose_AfterPipelinedRequests_AnswersEveryOneInOrder() throws {
        // Keys, a refresh, health, and the exchange of a fresh code, in one write.
        func pipeline() throws -> [UInt8] {
            Array("GET /auth/keys HTTP/1.1\r\nHost: x\r\n\r\n".utf8) + (try refreshRequest(witness.refreshToken))
                + Array("GET /__mock/health HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8) + (try redeemRequest(try server.webCode()))
        }
        // Twin without the half-close: the same answers, and the connection stays open.
        let open = try server.client()
        try open.send(try pipeline())
        try assertPipelineAnswers(open)
        XCTAssertEqual(try open.roundTrip("GET", "/auth/keys").raw, witness.keys)
        open.close()

        let halfClosed = try server.client()
        try halfClosed.send(try pipeline() + (try redeemRequest(try server.webCode())))
        halfClosed.shutdownWrite()
        try assertPipelineAnswers(halfClosed)
        try Self.assertClosingTokenAnswer(try halfClosed.readResponse(), keys: Self.codeKeys)
        XCTAssertTrue(try halfClosed.waitForClose())
        halfClosed.close()

        // An incomplete request at the end of the pipeline is dropped; the complete ones are not.
        let code = try server.webCode()
        let partial = try redeemRequest(code)
        let truncated = try server.client()
        try truncated.send(try pipeline() + partial.dropLast(3))
        truncated.shutdownWrite()
        try assertPipelineAnswers(truncated)
        XCTAssertTrue(try truncated.waitForClose(), "answered an incomplete request")
        truncated.close()
        try assertTokenAnswer(try server.redeem(code), keys: Self.codeKeys)
        try assertRecovered()
    }

    // MARK: - Connection flood

    func testAtScale_Flood_TenThousandConnectionsOpenedAndDropped_ReleasesEveryDescriptor() throws {
        let partialHead = Array("POST /auth/token HTTP/1.1\r\nHost: loc".utf8)
        let keysRequest = Array("GET /auth/keys HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        let badToken = Array("POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 21\r\n\r\ngrant_type=password&x".utf8)
        for index in 0..<10_000 {
            let client = try server.client()
            switch index % 4 {
            case 0:
                break
            case 1:
                try client.send(partialHead)
            case 2:
                // A reset instead of a FIN, half of them after a partial head.
                if index % 8 == 6 { try client.send(partialHead) }
                Self.resetOnClose(client)
            default:
                // A full request whose answer is never read.
                try client.send(index % 8 == 3 ? keysRequest : badToken)
            }
            client.close()
            // A normal client every 500 connections; being queued behind the flood, its answer
            // also means the server has accepted everything before it.
            if index % 500 == 499 {
                XCTAssertEqual(try server.get("/auth/keys").raw, witness.keys, "after \(index + 1) connections")
            }
            if index % 2500 == 2499 { try server.webTokens() }
        }
        try assertRecovered()
    }

    // MARK: - Oversized input

    func testOversizedHead_Answers431AndCloses_OnTokenAndControlEndpoints_ButExactLimitIsServed() throws {
        let token = try refreshRequest(witness.refreshToken)
        let signIn = Self.signInRequest()
        let cases: [(request: [UInt8], check: (RawHTTPResponse) throws -> Void)] = [(token, Self.assertRefreshAnswer), (signIn, Self.assertSignInAnswer)]
        for (request, check) in cases {
            // Accepted: a head of exactly 16 KiB, answered on a connection that stays open.
            let exact = try server.client()
            try exact.send(Self.padHead(request, to: 16 * 1024))
            try check(try exact.readResponse())
            XCTAssertEqual(try exact.roundTrip("GET", "/auth/keys").raw, witness.keys)
            exact.close()
            // Rejected twin: one byte more.
            try assertRejected(Self.padHead(request, to: 16 * 1024 + 1), 431)
            // Rejected: a head that never ends.
            try assertRejected(Array(request[0..<30]) + [UInt8](repeating: UInt8(ascii: "a"), count: 20_000), 431)
            // Accepted: exactly 100 header fields; rejected twin: 101.
            let hundred = try server.client()
            try hundred.send(Self.insertHeaders(request, count: 100 - Self.headerCount(request)))
            try check(try hundred.readResponse())
            hundred.close()
            try assertRejected(Self.insertHeaders(request, count: 101 - Self.headerCount(request)), 431)
            try assertServesOthers()
        }
        try assertRecovered()
    }

    func testOversizedBody_Answers413AndCloses_OnTokenAndControlEndpoints_ButExactLimitIsServed() throws {
        let limit = 1024 * 1024
        // Form bodies skip empty segments, so `&` pads a refresh request to any size.
        let form = Array(HTTPForm.encode(try refreshPairs(witness.refreshToken)).utf8)
        let formHead = "POST /auth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        // JSON allows whitespace, so spaces pad a sign-in body.
        let json = Array(Self.signInJSON.utf8)
        let jsonHead = "POST /__mock/sign-in HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        let cases: [(head: String, pad: UInt8, body: [UInt8], check: (RawHTTPResponse) throws -> Void)] = [
            (formHead, UInt8(ascii: "&"), form, Self.assertRefreshAnswer),
            (jsonHead, UInt8(ascii: " "), json, Self.assertSignInAnswer),
        ]
        for (head, pad, body, check) in cases {
            let exact = [UInt8](repeating: pad, count: limit - body.count) + body
            let over = [pad] + exact
            // Accepted: exactly 1 MiB, by length and chunked; the connection stays open.
            let client = try server.client()
            try client.send(Array("\(head)Content-Length: \(limit)\r\n\r\n".utf8) + exact)
            try check(try client.readResponse())
            try client.send(Array("\(head)Transfer-Encoding: chunked\r\n\r\n".utf8) + Self.chunked(exact, size: 100_000))
            try check(try client.readResponse())
            XCTAssertEqual(try client.roundTrip("GET", "/auth/keys").raw, witness.keys)
            client.close()
            // Rejected twins: one byte more, declared up front or discovered mid-stream.
            try assertRejected(Array("\(head)Content-Length: \(limit + 1)\r\n\r\n".utf8) + over, 413)
            try assertRejected(Array("\(head)Transfer-Encoding: chunked\r\n\r\n".utf8) + Self.chunked(over, size: 100_000), 413)
            try assertServesOthers()
        }
        // A huge chunked body: 16 MiB offered in 64 KiB chunks; the server stops it after 1 MiB.
        let huge = try server.client()
        huge.sendIgnoringDisconnect(Array("\(formHead)Transfer-Encoding: chunked\r\n\r\n".utf8))
        let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: UInt8(ascii: "&"), count: 0x10000) + Array("\r\n".utf8)
        for _ in 0..<256 {
            guard huge.sendIgnoringDisconnect(chunk) else { break }
        }
        XCTAssertEqual(try huge.readResponse().rawText, Self.protocolError(413))
        XCTAssertTrue(try huge.waitForClose())
        huge.close()
        // A single chunk declaring 4 GiB, and a Content-Length past any integer.
        try assertRejected(Array("\(formHead)Transfer-Encoding: chunked\r\n\r\n100000000\r\n&&&&".utf8), 413)
        try assertRejected(Array("\(formHead)Content-Length: 99999999999999999999999\r\n\r\n&&&&".utf8), 413)
        try assertRecovered()
    }

    // MARK: - Random bytes

    func testAtScale_RandomBytes_TwoHundredConnections_EachRejectedOrTimedOut_NeverServed() throws {
        var random = SplitMix64(seed: 0x5EED_F417)
        let prefixes = ["", "POST /auth/token HTTP/1.1\r\n", "GET /auth/keys HTTP/1.1\r\nHost: x\r\n", "POST /__mock/authorize HTTP/1.1\r\nContent-Length: "]
        // Fragments of HTTP, so some inputs get past the first byte before going wrong.
        let soup = ["GET", "POST", " ", "/", "/auth/token", "HTTP/1.1", "\r\n", "\r\n\r\n", ":", "Host", "Content-Length",
                    "Transfer-Encoding", "chunked", "0", "7", "ffff", "\n", "\0", "\u{7F}", "é", ";", "Expect", "100-continue"].map { Array($0.utf8) }
        var outcomes: [Int: Int] = [:]
        for batch in 0..<4 {
            var clients: [(RawHTTPClient, String)] = []
            for index in 0..<50 {
                let length = Int(random.next() % (index % 10 == 0 ? 24_000 : 600))
                var bytes: [UInt8] = []
                switch random.next() % 4 {
                case 0:
                    while bytes.count < length { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
                case 1:
                    bytes = Array(prefixes[Int(random.next() % UInt64(prefixes.count))].utf8)
                    while bytes.count < length { bytes.append(UInt8(truncatingIfNeeded: random.next())) }
                case 2:
                    while bytes.count < length { bytes += soup[Int(random.next() % UInt64(soup.count))] }
                default:
                    // Well-formed but random header fields and no Host: too many, too large, or
                    // (when the head ends) a request HTTP/1.1 refuses; unterminated ones time out.
                    bytes = Array("GET /auth/keys HTTP/1.1\r\n".utf8)
                    for _ in 0..<(random.next() % 160) {
                        let name = (0..<(1 + random.next() % 12)).map { _ in Self.tokenCharacters[Int(random.next() % UInt64(Self.tokenCharacters.count))] }
                        let value = (0..<(random.next() % (index % 10 == 0 ? 400 : 40))).map { _ in UInt8(32 + random.next() % 95) }
                        bytes += name + Array(": ".utf8) + value + Array("\r\n".utf8)
                    }
                    if random.next() % 2 == 0 { bytes += Array("\r\n".utf8) }
                }
                let client = try RawHTTPClient(port: server.port, timeout: 5)
                client.sendIgnoringDisconnect(bytes)
                clients.append((client, "batch \(batch) #\(index): \(bytes.count) bytes \(bytes.prefix(40))"))
            }
            try assertServesOthers()
            for (client, label) in clients {
                // The server must end every one: an error answer then a close, or a bare close.
                let received = try client.readAll()
                if received.isEmpty {
                    outcomes[0, default: 0] += 1
                } else {
                    let text = String(decoding: received, as: UTF8.self)
                    let status = Int(text.dropFirst(9).prefix(3)) ?? -1
                    XCTAssertEqual(text, Self.protocolError(status), label)
                    XCTAssertTrue([400, 408, 413, 431, 501, 505].contains(status), label)
                    outcomes[status, default: 0] += 1
                }
                client.close()
            }
        }
        XCTAssertEqual(outcomes.values.reduce(0, +), 200)
        XCTAssertGreaterThan(outcomes[400] ?? 0, 100, "\(outcomes)")
        try assertRecovered()
    }

    // MARK: - What every test checks

    /// State taken before the abuse, and the descriptor count it must return to.
    private struct Witness {
        let refreshToken: String
        let code: String
        let consent: Consent
        let keys: [UInt8]
        let descriptors: Int

        static func capture(_ server: AppleIDMockServer) throws -> Witness {
            let tokens = try server.webTokens()
            let refreshToken = try XCTUnwrap(tokens["refresh_token"]?.stringValue)
            let code = try server.webCode()
            // The consent the refresh token was issued under (alice's, for the web client's group).
            let consent = try XCTUnwrap(server.domain.consent(userID: "alice", clientID: "com.example.web"))
            let keys = try server.get("/auth/keys")
            XCTAssertEqual(keys.status, 200)
            // Every lazily opened descriptor (randomness, dispatch) is open by now.
            XCTAssertTrue(eventuallyTrue { server.http.openConnections == 0 })
            return Witness(refreshToken: refreshToken, code: code, consent: consent, keys: keys.raw,
                           descriptors: try openDescriptorCount())
        }
    }

    /// Letters and digits: always valid in a header field name.
    private static let tokenCharacters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-".utf8)

    private static let codeKeys = ["access_token", "token_type", "expires_in", "refresh_token", "id_token"]
    private static let refreshKeys = ["access_token", "token_type", "expires_in", "id_token"]
    private static let usedCode = #"{"error":"invalid_grant","error_description":"The code has already been used."}"#

    /// Another client is served correctly: the exact key set, and a full code exchange.
    private func assertServesOthers(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try server.get("/auth/keys").raw, witness.keys, file: file, line: line)
        try server.webTokens(file: file, line: line)
    }

    /// After the abuse: descriptors back to the count before it, others served, no state lost.
    private func assertRecovered(file: StaticString = #filePath, line: UInt = #line) throws {
        let baseline = witness.descriptors
        var count = -1
        let released = eventuallyTrue {
            count = (try? openDescriptorCount()) ?? -1
            return server.http.openConnections == 0 && count == baseline
        }
        XCTAssertTrue(released, "descriptors \(count), before the abuse \(baseline); connections \(server.http.openConnections)", file: file, line: line)
        try assertServesOthers(file: file, line: line)
        try assertTokenAnswer(try server.refresh(witness.refreshToken), keys: Self.refreshKeys, file: file, line: line)
        try assertTokenAnswer(try server.redeem(witness.code), keys: Self.codeKeys, file: file, line: line)
        assertAppleError(try server.redeem(witness.code), Self.usedCode, file: file, line: line)
        XCTAssertEqual(server.domain.consent(userID: "alice", clientID: "com.example.web"), witness.consent, file: file, line: line)
        XCTAssertEqual(server.domain.consentCount, 1, "consents", file: file, line: line)
    }

    /// Sends `raw` on a fresh connection; expects the HTTP layer's `code` error, then a close.
    private func assertRejected(_ raw: [UInt8], _ code: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let client = try server.client()
        client.sendIgnoringDisconnect(raw)
        XCTAssertEqual(try client.readResponse().rawText, Self.protocolError(code), file: file, line: line)
        XCTAssertTrue(try client.waitForClose(), "connection stays open after \(code)", file: file, line: line)
        client.close()
    }

    /// The answers to `pipeline` (keys, refresh, health, code exchange), in order.
    private func assertPipelineAnswers(_ client: RawHTTPClient, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try client.readResponse().raw, witness.keys, file: file, line: line)
        try assertTokenAnswer(try client.readResponse(), keys: Self.refreshKeys, file: file, line: line)
        XCTAssertEqual(try client.readResponse().status, 200, file: file, line: line)
        try assertTokenAnswer(try client.readResponse(), keys: Self.codeKeys, file: file, line: line)
    }

    // MARK: - Requests as bytes

    private func refreshPairs(_ token: String) throws -> [(String, String)] {
        [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("grant_type", "refresh_token"), ("refresh_token", token)]
    }

    private func refreshRequest(_ token: String) throws -> [UInt8] {
        Self.formRequest("/auth/token", try refreshPairs(token))
    }

    private func redeemRequest(_ code: String) throws -> [UInt8] {
        Self.formRequest("/auth/token", [("client_id", "com.example.web"), ("client_secret", try server.secret()), ("code", code),
                                         ("grant_type", "authorization_code"), ("redirect_uri", webRedirect)])
    }

    private static func formRequest(_ path: String, _ pairs: [(String, String)]) -> [UInt8] {
        let body = Array(HTTPForm.encode(pairs).utf8)
        return Array("POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
    }

    private static let signInJSON = #"{"user":"alice","client_id":"com.example.app","scopes":["name","email"],"nonce":"n-f"}"#

    private static func signInRequest() -> [UInt8] {
        Array("POST /__mock/sign-in HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(signInJSON.utf8.count)\r\n\r\n\(signInJSON)".utf8)
    }

    /// A token answer that may also say `Connection: close`: whether the server has seen the
    /// client's half-close when it answers depends on when the FIN arrives.
    private static func assertClosingTokenAnswer(_ response: RawHTTPResponse, keys: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        var open = response
        open.headers = HTTPHeaders()
        for field in response.headers.fields where !(field.name == "Connection" && field.value == "close") { open.headers.add(field.name, field.value) }
        try assertTokenAnswer(open, keys: keys, file: file, line: line)
    }

    private static func assertRefreshAnswer(_ response: RawHTTPResponse) throws {
        try assertTokenAnswer(response, keys: refreshKeys)
    }

    private static func assertSignInAnswer(_ response: RawHTTPResponse) throws {
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertNotNil(try jsonObject(response.body)["authorizationCode"])
    }

    /// `request` with an `X-Pad` field making its head (through the blank line) exactly `size` bytes.
    private static func padHead(_ request: [UInt8], to size: Int) -> [UInt8] {
        let split = find(Array("\r\n".utf8), in: request)! + 2
        let headEnd = find(Array("\r\n\r\n".utf8), in: request)! + 4
        let padding = size - headEnd - "X-Pad: \r\n".utf8.count
        return Array(request[0..<split]) + Array("X-Pad: \(String(repeating: "p", count: padding))\r\n".utf8) + Array(request[split...])
    }

    /// `request` with `count` extra header fields after the request line.
    private static func insertHeaders(_ request: [UInt8], count: Int) -> [UInt8] {
        let split = find(Array("\r\n".utf8), in: request)! + 2
        return Array(request[0..<split]) + Array((0..<count).map { "X-\($0): v\r\n" }.joined().utf8) + Array(request[split...])
    }

    /// Header fields in `request`'s head.
    private static func headerCount(_ request: [UInt8]) -> Int {
        let head = request[0..<find(Array("\r\n\r\n".utf8), in: request)!]
        return String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n").count - 1
    }

    /// `body` in chunks of at most `size` bytes, then the last chunk.
    private static func chunked(_ body: [UInt8], size: Int) -> [UInt8] {
        var raw: [UInt8] = []
        var start = 0
        while start < body.count {
            let end = min(start + size, body.count)
            raw += Array("\(String(end - start, radix: 16))\r\n".utf8) + body[start..<end] + Array("\r\n".utf8)
            start = end
        }
        return raw + Array("0\r\n\r\n".utf8)
    }

    // MARK: - Sockets and descriptors

    /// The exact bytes MiniHTTP sends for its own protocol errors, which close the connection.
    private static func protocolError(_ code: Int) -> String {
        let status = HTTPStatus(code)
        let body = "\(code) \(status.reason)\n"
        return "HTTP/1.1 \(code) \(status.reason)\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
    }

    /// True when `client` has bytes (or an end of stream) to read within `milliseconds`.
    private static func readable(_ client: RawHTTPClient, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    /// Makes the next `close()` send a TCP reset instead of a FIN (SO_LINGER 0).
    private static func resetOnClose(_ client: RawHTTPClient) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<start + needle.count].elementsEqual(needle) {
            return start
        }
        return nil
    }
}

extension RawHTTPClient {
    /// Sends `bytes` to a server that may already have rejected the request and closed; false
    /// (and no failure) when it reset or closed the connection.
    @discardableResult
    fileprivate func sendIgnoringDisconnect(_ bytes: [UInt8]) -> Bool {
        do {
            try send(bytes)
            return true
        } catch RawHTTPClient.Failure.system(_, let code) where code == EPIPE || code == ECONNRESET {
            return false
        } catch {
            XCTFail("send failed: \(error)")
            return false
        }
    }
}

/// Descriptors this process has open: the server's and the test clients' alike.
func openDescriptorCount() throws -> Int {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
}


/// SplitMix64: a tiny seeded generator, so the random-bytes test is the same on every run.
private struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

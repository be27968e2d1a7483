import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The exchange observer sees every exchange a live server has: handler answers, MiniHTTP's own
/// answers and requests cut off mid-way.
final class ServerObserverTests: XCTestCase {
    private var server: HTTPServer!
    private var recorder: HTTPExchangeRecorder!

    override func tearDown() {
        server?.stop()
        server = nil
    }

    /// Starts the fixture server (or one with `router`) with a fresh recorder installed, after `configure`.
    private func start(timeouts: Double = 5, gate: Gate = Gate(), router: Router? = nil,
                       _ configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws {
        recorder = HTTPExchangeRecorder()
        var configuration = HTTPServerConfiguration.testing(timeouts: timeouts)
        configuration.observer = recorder
        configure(&configuration)
        server = try ServerFixture.start(configuration, gate: gate, router: router)
    }

    func testObserver_SeesExchange_WithPeerIDRequestAndStatus() throws {
        try start()
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("POST", "/length?x=1", headers: [("X-Trace", "7")], body: Array("abc".utf8)).rawText,
                       ServerFixture.okText("3"))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.id, 1)
        XCTAssertEqual(exchange.peer, HTTPPeerAddress(host: "127.0.0.1", port: ServerFixture.localPort(client)))
        XCTAssertFalse(exchange.isTLS)
        XCTAssertEqual(exchange.request?.method, .post)
        XCTAssertEqual(exchange.request?.target, "/length?x=1")
        XCTAssertEqual(exchange.request?.headers["X-Trace"], "7")
        XCTAssertEqual(exchange.request?.body, Array("abc".utf8))
        XCTAssertEqual(exchange.status, .ok)
        XCTAssertEqual(exchange.responseHeaders["Content-Type"], "text/plain; charset=utf-8")
        XCTAssertEqual(exchange.responseBodyCount, 1)
        XCTAssertNil(exchange.reason)
    }

    func testObserver_IDsAreUnique_AndIncreaseAlongAConnection() throws {
        try start { $0.eventLoopCount = 2 }
        let first = try ServerFixture.client(server)
        for _ in 0..<3 { _ = try first.roundTrip("GET", "/hello") }
        let second = try ServerFixture.client(server)
        _ = try second.roundTrip("GET", "/hello")
        // Each loop numbers its own: the first connection went to loop 0 of 2 (1, 3, 5), the
        // second to loop 1 (2).
        XCTAssertEqual(recorder.waitForExchanges(4).map(\.id), [1, 3, 5, 2])
    }

    func testObserver_WithOneLoop_IDsRunWithoutAGap() throws {
        try start { $0.eventLoopCount = 1 }
        for _ in 0..<2 {
            let client = try ServerFixture.client(server)
            for _ in 0..<2 { _ = try client.roundTrip("GET", "/hello") }
        }
        XCTAssertEqual(recorder.waitForExchanges(4).map(\.id), [1, 2, 3, 4])
    }

    func testObserver_Sees400_WhenRequestLineIsMalformed() throws {
        try start()
        let client = try ServerFixture.client(server)
        ServerFixture.sendIgnoringDisconnect(client, Array("GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(400))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.status, .badRequest)
        XCTAssertNil(exchange.request)
        guard case .unparsable(.malformed) = exchange.reason else { return XCTFail("reason: \(String(describing: exchange.reason))") }
        XCTAssertEqual(exchange.responseBodyCount, "400 Bad Request\n".utf8.count)
    }

    func testObserver_Sees431_WhenHeadIsTooLarge() throws {
        try start()
        let client = try ServerFixture.client(server)
        ServerFixture.sendIgnoringDisconnect(client, Array("GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: \(String(repeating: "p", count: 17_000))\r\n\r\n".utf8))
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(431))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.status, .headerFieldsTooLarge)
        XCTAssertEqual(exchange.reason, .unparsable(.headTooLarge))
    }

    func testObserver_Sees404And405_FromTheRouter() throws {
        try start()
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("GET", "/nowhere").status, 404)
        XCTAssertEqual(try client.roundTrip("DELETE", "/hello").status, 405)
        let seen = recorder.waitForExchanges(2)
        XCTAssertEqual(seen.map(\.status), [.notFound, .methodNotAllowed])
        XCTAssertEqual(seen.map(\.request?.target), ["/nowhere", "/hello"])
        XCTAssertEqual(seen.last?.responseHeaders["Allow"], "GET, HEAD")
    }

    func testObserver_Sees408_WhenHeadStalls() throws {
        try start(timeouts: 0.3)
        let client = try ServerFixture.client(server)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(408))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.status, .requestTimeout)
        XCTAssertEqual(exchange.reason, .timedOut)
        XCTAssertNil(exchange.request)
    }

    func testObserver_SeesCutOff_WhenPeerClosesMidBody() throws {
        try start()
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        client.shutdownWrite()
        XCTAssertTrue(try client.waitForClose())
        let exchange = try recorder.onlyExchange()
        XCTAssertNil(exchange.status)
        XCTAssertEqual(exchange.reason, .peerClosed)
        XCTAssertNil(exchange.request)
        XCTAssertEqual(exchange.responseBodyCount, 0)
    }

    func testObserver_SeesDeferredExchange_OnceAnswered() throws {
        let gate = Gate()
        try start(gate: gate)
        let client = try ServerFixture.client(server)
        try client.request("GET", "/gated")
        XCTAssertTrue(gate.waitUntilEntered())
        usleep(50_000)
        XCTAssertEqual(recorder.exchanges.count, 0, "reported before the handler answered")
        gate.open()
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("gated"))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.status, .ok)
        XCTAssertEqual(exchange.request?.target, "/gated")
        XCTAssertEqual(exchange.responseBodyCount, 5)
        XCTAssertNil(exchange.reason)
    }

    func testObserver_SeesCutOff_WhenClientResetsDuringDeferredHandler() throws {
        let gate = Gate()
        try start(gate: gate)
        let client = try ServerFixture.client(server)
        try client.request("GET", "/gated")
        XCTAssertTrue(gate.waitUntilEntered())
        ServerFixture.resetOnClose(client)
        client.close()
        let exchange = try recorder.onlyExchange()
        gate.open()
        XCTAssertNil(exchange.status)
        XCTAssertEqual(exchange.request?.target, "/gated")
        XCTAssertEqual(exchange.reason, .connectionClosed)
    }

    func testObserver_ReportsNoBodyBytes_WhenMethodIsHead() throws {
        try start()
        let client = try ServerFixture.client(server)
        try client.request("HEAD", "/hello")
        XCTAssertEqual(try client.readResponse(headOnly: true).status, 200)
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.request?.method, .head)
        XCTAssertEqual(exchange.responseBodyCount, 0)
    }

    func testObserver_Sees413_WhenBodyPassesMaxBodyBytes() throws {
        try start { $0.limits.maxBodyBytes = 16 }
        let declared = try ServerFixture.client(server)
        ServerFixture.sendIgnoringDisconnect(declared, Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n".utf8) + [UInt8](repeating: 97, count: 17))
        XCTAssertEqual(try declared.readResponse().rawText, ServerFixture.protocolError(413))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.status, .contentTooLarge)
        XCTAssertEqual(exchange.reason, .unparsable(.bodyTooLarge))
        XCTAssertNil(exchange.request)
        XCTAssertEqual(exchange.responseBodyCount, "413 Content Too Large\n".utf8.count)
        // A chunked body growing past the limit is the same refusal.
        let chunked = try ServerFixture.client(server)
        ServerFixture.sendIgnoringDisconnect(chunked, Array("POST /length HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n".utf8)
            + [UInt8](repeating: 97, count: 17) + Array("\r\n0\r\n\r\n".utf8))
        XCTAssertEqual(try chunked.readResponse().rawText, ServerFixture.protocolError(413))
        // The twin: a body of exactly the limit is the handler's, with its request.
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("POST", "/length", body: [UInt8](repeating: 98, count: 16)).rawText,
                       ServerFixture.okText("16"))
        let seen = recorder.waitForExchanges(3)
        XCTAssertEqual(seen.map(\.status), [.contentTooLarge, .contentTooLarge, .ok])
        XCTAssertEqual(seen.map(\.reason), [.unparsable(.bodyTooLarge), .unparsable(.bodyTooLarge), nil])
        XCTAssertEqual(seen.map { $0.request?.body.count }, [nil, nil, 16])
    }

    func testObserver_Sees503_WhenBodyBudgetIsExhausted() throws {
        try start {
            $0.limits.maxBodyBytes = 1000
            $0.maxBufferedBodyBytes = 1500
        }
        // A holder keeps 999 body bytes of the 1,500; 600 more do not fit.
        let holder = try ServerFixture.client(server)
        try holder.send(Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8) + [UInt8](repeating: 97, count: 999))
        XCTAssertTrue(ServerFixture.eventually { server.reservedBodyBytes == 999 }, "reserved: \(server.reservedBodyBytes)")
        let refused = try ServerFixture.client(server)
        ServerFixture.sendIgnoringDisconnect(refused, Array("POST /length HTTP/1.1\r\nHost: x\r\nContent-Length: 600\r\n\r\n".utf8)
            + [UInt8](repeating: 97, count: 600))
        XCTAssertEqual(try refused.readResponse().rawText, ServerFixture.protocolError(503))
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.status, .serviceUnavailable)
        XCTAssertEqual(exchange.reason, .bodyBudgetExhausted)
        XCTAssertNil(exchange.request)
        XCTAssertEqual(exchange.responseBodyCount, "503 Service Unavailable\n".utf8.count)
        // The twin: 500 bytes fit beside the holder's 999.
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("POST", "/length", body: [UInt8](repeating: 98, count: 500)).rawText,
                       ServerFixture.okText("500"))
        // The holder, closing mid-body, is reported once, as cut off.
        holder.close()
        let seen = recorder.waitForExchanges(3)
        XCTAssertEqual(seen.map(\.status), [.serviceUnavailable, .ok, nil])
        XCTAssertEqual(seen.map(\.reason), [.bodyBudgetExhausted, nil, .peerClosed])
    }

    func testObserver_CarriesHandlersNote_WhichIsNeverSent_AndNilForMiniHTTPsOwnAnswers() throws {
        var router = ServerFixture.router()
        router.add(.get, "/noted", immediate: { _ in Self.noted("refused", note: "immediate-note-7f3a") })
        router.add(.get, "/noted-deferred", deferred: { _ in Self.noted("later", note: "deferred-note-7f3a") })
        try start(router: router)
        let client = try ServerFixture.client(server)
        // Exact bytes: the note is on no line of the answer.
        XCTAssertEqual(try client.roundTrip("GET", "/noted").rawText, ServerFixture.okText("refused"))
        XCTAssertEqual(try client.roundTrip("GET", "/noted-deferred").rawText, ServerFixture.okText("later"))
        // The twins, on the same connection: a handler without a note, and MiniHTTP's own answers.
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        XCTAssertEqual(try client.roundTrip("GET", "/nowhere").status, 404)
        ServerFixture.sendIgnoringDisconnect(client, Array("GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(400))
        let seen = recorder.waitForExchanges(5)
        XCTAssertEqual(seen.map(\.status), [.ok, .ok, .ok, .notFound, .badRequest])
        XCTAssertEqual(seen.map { $0.note as? String }, ["immediate-note-7f3a", "deferred-note-7f3a", nil, nil, nil])
        XCTAssertEqual(seen.map { $0.note == nil }, [false, false, true, true, true])

        // Without an observer the same route answers the same bytes.
        let unobserved = try ServerFixture.start(router: router)
        defer { unobserved.stop() }
        XCTAssertEqual(try ServerFixture.client(unobserved).roundTrip("GET", "/noted").rawText, ServerFixture.okText("refused"))
    }

    /// A text 200 carrying `note` for the observer.
    private static func noted(_ text: String, note: String) -> HTTPResponse {
        var response = HTTPResponse.text(text)
        response.note = note
        return response
    }

    func testExchangeInit_KeepsEveryPart_AndDefaultsTheOptionalOnes() {
        let request = HTTPRequest(method: .post, target: "/auth/token?a=1", headers: ["Host": "x"], body: [1, 2, 3])
        let full = HTTPExchange(id: 9, peer: HTTPPeerAddress(host: "::1", port: 4242), isTLS: true, request: request, status: .contentTooLarge,
                                responseHeaders: ["Allow": "GET"], responseBodyCount: 12, microseconds: 345, reason: .bodyBudgetExhausted, note: "n")
        XCTAssertEqual(full.id, 9)
        XCTAssertEqual(full.peer, HTTPPeerAddress(host: "::1", port: 4242))
        XCTAssertTrue(full.isTLS)
        XCTAssertEqual(full.request?.method, .post)
        XCTAssertEqual(full.request?.target, "/auth/token?a=1")
        XCTAssertEqual(full.request?.headers, ["Host": "x"])
        XCTAssertEqual(full.request?.body, [1, 2, 3])
        XCTAssertEqual(full.status, .contentTooLarge)
        XCTAssertEqual(full.responseHeaders, ["Allow": "GET"])
        XCTAssertEqual(full.responseBodyCount, 12)
        XCTAssertEqual(full.microseconds, 345)
        XCTAssertEqual(full.reason, .bodyBudgetExhausted)
        XCTAssertEqual(full.note as? String, "n")
        // The twin: given only what is required, the rest is empty.
        let bare = HTTPExchange(id: 1, request: nil, status: nil)
        XCTAssertEqual(bare.id, 1)
        XCTAssertNil(bare.peer)
        XCTAssertFalse(bare.isTLS)
        XCTAssertNil(bare.request)
        XCTAssertNil(bare.status)
        XCTAssertEqual(bare.responseHeaders, HTTPHeaders())
        XCTAssertEqual(bare.responseBodyCount, 0)
        XCTAssertEqual(bare.microseconds, 0)
        XCTAssertNil(bare.reason)
        XCTAssertNil(bare.note)
    }
}

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

    /// Starts the fixture server with a fresh recorder installed.
    private func start(timeouts: Double = 5, gate: Gate = Gate()) throws {
        recorder = HTTPExchangeRecorder()
        var configuration = HTTPServerConfiguration.testing(timeouts: timeouts)
        configuration.observer = recorder
        server = try ServerFixture.start(configuration, gate: gate)
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

    func testObserver_IDsIncrease_AcrossRequestsAndConnections() throws {
        try start()
        let first = try ServerFixture.client(server)
        for _ in 0..<3 { _ = try first.roundTrip("GET", "/hello") }
        let second = try ServerFixture.client(server)
        _ = try second.roundTrip("GET", "/hello")
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
}

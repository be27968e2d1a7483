import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// What an exchange says about its connection: TLS or not, and the client's address over IPv6.
/// (A plain IPv4 exchange, `isTLS` false with the client's address, is in `ServerObserverTests`.)
final class ServerObserverTransportTests: XCTestCase {
    private var server: HTTPServer!
    private var recorder: HTTPExchangeRecorder!

    override func tearDown() {
        server?.stop()
        server = nil
    }

    /// Starts the fixture server with a fresh recorder installed, after `configure`.
    private func start(_ configure: (inout HTTPServerConfiguration) throws -> Void) throws {
        recorder = HTTPExchangeRecorder()
        var configuration = HTTPServerConfiguration.testing(timeouts: 5)
        configuration.observer = recorder
        try configure(&configuration)
        server = try ServerFixture.start(configuration)
    }

    func testObserver_ReportsTLS_WithRequestAndStatus_WhenExchangeIsOverTLS() throws {
        try start { $0.tls = try TLSFixture.context() }
        let response = try TLSFixture.client().send("POST", url: server.url + "/echo", body: Array("over tls".utf8))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), "over tls")
        let exchange = try recorder.onlyExchange()
        XCTAssertTrue(exchange.isTLS)
        XCTAssertEqual(exchange.peer?.host, "127.0.0.1")
        XCTAssertEqual(exchange.request?.method, .post)
        XCTAssertEqual(exchange.request?.target, "/echo")
        XCTAssertEqual(exchange.request?.body, Array("over tls".utf8))
        XCTAssertEqual(exchange.status, .ok)
        XCTAssertEqual(exchange.responseBodyCount, 8)
        XCTAssertNil(exchange.reason)
    }

    func testObserver_ReportsPlaintextOnTLSPort_As400WithoutRequest_AndNotAsTLS() throws {
        try start { $0.tls = try TLSFixture.context() }
        // Bytes that are neither TLS nor a request line fail the handshake: no exchange.
        let garbage = try ServerFixture.client(server)
        try garbage.send(Array(repeating: 0xff, count: 64))
        XCTAssertEqual(try garbage.readAll(), [])
        let plain = try ServerFixture.client(server)
        try plain.send("GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let answer = String(decoding: try plain.readAll(), as: UTF8.self)
        XCTAssertEqual(answer, "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 37\r\n"
            + "Connection: close\r\n\r\nThis port speaks HTTPS; use https://\n")
        let exchange = try recorder.onlyExchange()
        XCTAssertEqual(exchange.reason, .plaintextOnTLSPort)
        XCTAssertEqual(exchange.status, .badRequest)
        XCTAssertNil(exchange.request)
        // The refusal went in plaintext: nothing of this exchange was over TLS.
        XCTAssertFalse(exchange.isTLS)
        XCTAssertEqual(exchange.peer, HTTPPeerAddress(host: "127.0.0.1", port: ServerFixture.localPort(plain)))
        XCTAssertEqual(exchange.responseHeaders["Content-Type"], "text/plain; charset=utf-8")
        XCTAssertEqual(exchange.responseBodyCount, 37)
        XCTAssertNil(exchange.note)
    }

    func testObserver_ReportsIPv6PeerAndPort_WhenServerIsBoundToIPv6Loopback() throws {
        do {
            try start { $0.host = "::1" }
        } catch let error as SocketError where error.code == EADDRNOTAVAIL || error.code == EAFNOSUPPORT {
            throw XCTSkip("::1 cannot be bound on this machine (IPv6 disabled or no loopback address): \(error)")
        }
        let client = try ServerFixture.client(server, host: "::1")
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        let exchange = try recorder.onlyExchange()
        let port = ServerFixture.localPort(client)
        XCTAssertGreaterThan(port, 0)
        XCTAssertEqual(exchange.peer, HTTPPeerAddress(host: "::1", port: port))
        XCTAssertEqual(exchange.peer?.description, "[::1]:\(port)")
        // The twin: an IPv4 address is written without brackets.
        XCTAssertEqual(HTTPPeerAddress(host: "127.0.0.1", port: port).description, "127.0.0.1:\(port)")
        XCTAssertFalse(exchange.isTLS)
        XCTAssertEqual(exchange.status, .ok)
    }
}

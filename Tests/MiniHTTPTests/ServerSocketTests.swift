import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

final class ServerSocketTests: XCTestCase {
    func testPortZero_BindsRealPort_AndReportsURL() throws {
        let server = try ServerFixture.start()
        defer { server.stop() }
        XCTAssertGreaterThan(server.port, 0)
        XCTAssertEqual(server.host, "127.0.0.1")
        XCTAssertEqual(server.url, "http://127.0.0.1:\(server.port)")
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").text, "hi")
    }

    func testBind_Throws_WhenPortAlreadyInUse_NamingTheAddress() throws {
        let first = try ServerFixture.start()
        defer { first.stop() }
        var configuration = ServerFixture.relaxed
        configuration.port = first.port
        XCTAssertThrowsError(try ServerFixture.start(configuration)) { error in
            XCTAssertEqual(error as? SocketError, SocketError(call: "bind", code: EADDRINUSE, address: "127.0.0.1:\(first.port)"))
            XCTAssertEqual("\(error)", "bind 127.0.0.1:\(first.port): Address already in use (errno \(EADDRINUSE))")
        }
        configuration.host = "::1"
        configuration.port = 0
        let v6 = try ServerFixture.start(configuration)
        defer { v6.stop() }
        configuration.port = v6.port
        XCTAssertThrowsError(try ServerFixture.start(configuration)) { error in
            XCTAssertEqual((error as? SocketError)?.address, "[::1]:\(v6.port)")
        }
    }

    func testBind_Throws_WhenHostIsNotALiteral() {
        var configuration = ServerFixture.relaxed
        configuration.host = "example.invalid"
        XCTAssertThrowsError(try ServerFixture.start(configuration)) { error in
            XCTAssertEqual(error as? SocketError, SocketError(call: "inet_pton", code: EINVAL))
        }
        configuration.host = "127.0.0.1"
        configuration.port = 65536
        XCTAssertThrowsError(try ServerFixture.start(configuration)) { error in
            XCTAssertEqual(error as? SocketError, SocketError(call: "bind", code: EINVAL))
        }
    }

    func testIPv6_ServesLoopbackClient() throws {
        var configuration = ServerFixture.relaxed
        configuration.host = "::1"
        let server = try ServerFixture.start(configuration)
        defer { server.stop() }
        XCTAssertGreaterThan(server.port, 0)
        XCTAssertEqual(server.url, "http://[::1]:\(server.port)")
        let client = try ServerFixture.client(server, host: "::1")
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        XCTAssertEqual(try client.roundTrip("POST", "/echo", body: Array("v6".utf8)).text, "v6")
        // Bound to ::1 only: the IPv4 loopback is not served.
        ServerFixture.assertRefused(port: server.port)
    }

    func testIPv4_ServesLoopbackClient_WhenBoundToLocalhost() throws {
        var configuration = ServerFixture.relaxed
        configuration.host = "localhost"
        let server = try ServerFixture.start(configuration)
        defer { server.stop() }
        XCTAssertEqual(server.host, "127.0.0.1")
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").text, "hi")
    }

    func testPeerReset_MidWrite_DoesNotStopServer() throws {
        let server = try ServerFixture.start()
        defer { server.stop() }
        for _ in 0..<5 {
            let client = try ServerFixture.client(server)
            try client.send("GET /big?bytes=8388608 HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertFalse(try client.waitForClose(), "the response started")
            ServerFixture.resetOnClose(client)
            client.close()
        }
        let vanished = try ServerFixture.client(server)
        try vanished.send("GET /big?bytes=8388608 HTTP/1.1\r\nHost: x\r\n\r\n")
        vanished.close()
        let next = try ServerFixture.client(server)
        XCTAssertEqual(try next.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
        next.close()
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
    }

    func testOpenConnections_ReturnsToZero_AfterManyClientsClose() throws {
        let server = try ServerFixture.start()
        defer { server.stop() }
        var clients: [RawHTTPClient] = []
        for index in 0..<500 {
            let client = try ServerFixture.client(server)
            if index % 2 == 0 { try client.request("GET", "/hello") }
            clients.append(client)
        }
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 500 }, "open: \(server.openConnections)")
        for (index, client) in clients.enumerated() where index % 2 == 0 {
            XCTAssertEqual(try client.readResponse().text, "hi")
        }
        for (index, client) in clients.enumerated() {
            if index % 3 == 0 { ServerFixture.resetOnClose(client) }
            client.close()
        }
        clients.removeAll()
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 }, "open: \(server.openConnections)")
        XCTAssertEqual(try ServerFixture.client(server).roundTrip("GET", "/hello").text, "hi")
    }

    func testStop_ReleasesEveryDescriptor() throws {
        // A first server warms up whatever the runtime opens once per process (dispatch, threads).
        let warmUp = try ServerFixture.start()
        _ = try ServerFixture.client(warmUp).roundTrip("GET", "/slow")
        warmUp.stop()

        let before = try ServerFixture.openDescriptorCount()
        let server = try ServerFixture.start()
        var clients: [RawHTTPClient] = []
        for index in 0..<50 {
            let client = try ServerFixture.client(server)
            XCTAssertEqual(try client.roundTrip("GET", index % 10 == 0 ? "/slow" : "/hello").status, 200)
            clients.append(client)
        }
        clients.removeAll()
        server.stop()
        XCTAssertEqual(try ServerFixture.openDescriptorCount(), before)
        withExtendedLifetime(server) {}
    }
}

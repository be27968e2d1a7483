import Dispatch
import Glibc
import Synchronization
@testable import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Timeouts are small here (0.3 s). Tests assert on what the client sees — a 408, a close, a
/// dropped connection — and bound every wait, but never assert on how long anything took.
final class ServerTimeoutTests: XCTestCase {
    private var server: HTTPServer!

    override func setUpWithError() throws {
        server = try ServerFixture.start(.testing(timeouts: 0.3))
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    /// True when `client` has bytes (or an end of stream) to read within `milliseconds`.
    private func readable(_ client: RawHTTPClient, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, milliseconds) > 0
    }

    func testHeaderTimeout_Answers408AndCloses_WhenSlowlorisDripsHeaderBytes() throws {
        let client = try ServerFixture.client(server)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\nX-Drip: ")
        // One byte every 50 ms: each gap is well inside the 0.3 s timeout, the whole head never is.
        var answered = false
        for _ in 0..<100 {
            if readable(client, milliseconds: 50) {
                answered = true
                break
            }
            try client.send("a")
        }
        XCTAssertTrue(answered, "the server kept waiting for a head that drips forever")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(408))
        XCTAssertTrue(try client.waitForClose())
    }

    func testHeaderTimeout_NotApplied_WhenHeadArrivesInPiecesPromptly() throws {
        let client = try ServerFixture.client(server)
        try client.send("GET /hello HT")
        try client.send("TP/1.1\r\nHost: x\r")
        try client.send("\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hi"))
    }

    func testRequestTimeout_Answers408AndCloses_WhenBodyStalls() throws {
        let client = try ServerFixture.client(server)
        try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(408))
        XCTAssertTrue(try client.waitForClose())
    }

    func testTimeouts_CountNoTimeElapsed_WhenActivityIsStampedAfterTheSweepReadTheClock() {
        XCTAssertEqual(Connection.seconds(from: 2_000_000_000, to: 1_999_999_999), 0)
        XCTAssertEqual(Connection.seconds(from: 2_000_000_000, to: 2_000_000_000), 0)
        XCTAssertEqual(Connection.seconds(from: 1_000_000_000, to: 3_500_000_000), 2.5)
    }

    func testIdleTimeout_NotApplied_ToBusyKeepAliveConnectionsWithDeferredResponses() throws {
        // Deferred responses complete on other threads while the loops sweep for timeouts; no
        // connection that keeps sending may be closed as idle.
        let failures = Mutex<[String]>([])
        let server: HTTPServer = self.server
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            do {
                let client = try ServerFixture.client(server)
                for index in 0..<150 {
                    let answer = try client.roundTrip("POST", "/echo", body: Array("\(worker)-\(index)".utf8))
                    if answer.text != "\(worker)-\(index)" { throw RawHTTPClient.Failure.malformed(answer.rawText) }
                }
            } catch {
                failures.withLock { $0.append("connection \(worker): \(error)") }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, [])
    }

    func testIdleTimeout_ClosesKeepAliveConnection() throws {
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
        XCTAssertTrue(try client.waitForClose())
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
    }

    func testIdleTimeout_ClosesConnectionThatNeverSendsAByte() throws {
        let client = try ServerFixture.client(server)
        XCTAssertTrue(try client.waitForClose())
    }

    func testWriteTimeout_DropsClientThatNeverReads_AndServesOthers() throws {
        // 16 MiB cannot fit in the socket buffers of both ends, so the server stalls mid-write.
        let stalled = try ServerFixture.client(server)
        try stalled.send("GET /big?bytes=16777216 HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertFalse(try stalled.waitForClose(), "the response started")
        // While it is stuck, others are served.
        let other = try ServerFixture.client(server)
        XCTAssertEqual(try other.roundTrip("GET", "/hello").text, "hi")
        other.close()
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 }, "the stalled client was never dropped")
        // What it can still read is a truncated response followed by the end of the stream.
        XCTAssertThrowsError(try stalled.readResponse()) { error in
            guard case RawHTTPClient.Failure.closed(let received) = error else { return XCTFail("\(error)") }
            XCTAssertLessThan(received.count, 16 * 1024 * 1024)
        }
        let later = try ServerFixture.client(server)
        XCTAssertEqual(try later.roundTrip("GET", "/hello").text, "hi")
    }

    // MARK: - Trickles cannot extend the timeouts (probe F14)

    func testIdleTimeout_ClosesConnection_WhenClientTricklesEmptyLines() throws {
        let client = try ServerFixture.client(server)
        // An empty line every 50 ms: each gap is well inside the 0.3 s timeouts, and the parser
        // skips empty lines, so none of them is a request; the connection must still go.
        var closed = false
        for _ in 0..<200 {
            if readable(client, milliseconds: 50) {
                closed = true
                break
            }
            ServerFixture.sendIgnoringDisconnect(client, Array("\r\n".utf8))
        }
        XCTAssertTrue(closed, "the server kept a connection that only ever sent empty lines")
        // Nothing to answer (no request began), so no 408: just the end of the stream.
        XCTAssertEqual(try client.readAll(), [])
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
    }

    func testHeaderTimeout_Answers408_WhenEmptyLinesPrecedeAStalledRequestLine() throws {
        let client = try ServerFixture.client(server)
        try client.send("\r\n\r\nGET /hel")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(408))
        XCTAssertTrue(try client.waitForClose())
    }

    func testIdleTimeout_StillServes_WhenEmptyLinesPrecedeARequest() throws {
        let client = try ServerFixture.client(server)
        try client.send("\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hi"))
    }

    func testWriteTimeout_DropsSlowReader_ThatKeepsReadingAFewBytesAtATime() throws {
        // A small receive buffer, set before connecting so the window is small from the start:
        // every few bytes the client reads let the server send a little more, which used to
        // restart the write timeout each time.
        let fd = try Self.connectWithSmallReceiveBuffer(port: server.port)
        defer { close(fd) }
        let request = Array("GET /big?bytes=67108864 HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        XCTAssertEqual(request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, request.count)
        var received = 0
        var closed = false
        var buffer = [UInt8](repeating: 0, count: 8192)
        // At most 8 KiB per half millisecond: the server can send more many times within each
        // 0.3 s, while 64 MiB takes seconds at that pace. The bound only keeps a failing test from
        // hanging (with progress restarting the timeout, the loop ran out with the response still
        // coming).
        for _ in 0..<6000 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 || (count < 0 && errno == ECONNRESET) {
                closed = true
                break
            }
            if count > 0 { received += count }
            usleep(500)
        }
        XCTAssertTrue(closed, "a client that reads slowly kept the connection open after \(received) bytes")
        XCTAssertGreaterThan(received, 0, "the response started")
        XCTAssertLessThan(received, 64 * 1024 * 1024)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 0 })
    }

    /// A blocking IPv4 socket with a 4 KiB receive buffer, connected to the loopback `port`.
    private static func connectWithSmallReceiveBuffer(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPClient.Failure.system("socket", errno) }
        var size: Int32 = 4096
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw RawHTTPClient.Failure.system("connect", code)
        }
        return fd
    }
}

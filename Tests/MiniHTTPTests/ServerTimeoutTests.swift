import Dispatch
import Glibc
import Synchronization
@testable import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Timeouts of 30 s (a request timeout of 60 s) on a clock only the test moves
/// (`ManualServerClock`): each test moves it past a limit, or short of it for the twin, and
/// sweeps, then asserts on what the client sees (a 408, a close, a dropped connection). No test
/// waits for time to pass, so none depends on how fast the machine is.
final class ServerTimeoutTests: XCTestCase {
    private var server: HTTPServer!
    private let clock = ManualServerClock()

    override func setUpWithError() throws {
        server = try ServerFixture.start(.testing(clock: clock))
    }

    override func tearDown() {
        server.stop()
        server = nil
    }

    /// True when `client` has bytes (or an end of stream) to read now.
    private func readable(_ client: RawHTTPClient) -> Bool {
        var entry = pollfd(fd: client.fd, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }

    /// Sends `text` and waits (bounded) until the server's loop has read it, so that a move of
    /// the clock that follows counts from after it.
    private func served(_ client: RawHTTPClient, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try client.send(text)
        XCTAssertTrue(ServerFixture.eventually { ServerFixture.unread(by: server.port, from: client) == 0 }, file: file, line: line)
    }

    /// Sends `text` and moves the clock 5 s, seven times: for the first 30 s (the timeouts) the
    /// server answers nothing and keeps the connection; the seventh move passes them.
    private func trickle(_ client: RawHTTPClient, _ text: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for round in 1...7 {
            try served(client, text, file: file, line: line)
            clock.pass(5, on: server)
            if round < 7 { XCTAssertFalse(readable(client), "answered or closed after \(round * 5) s", file: file, line: line) }
        }
    }

    func testHeaderTimeout_Answers408AndCloses_WhenSlowlorisDripsHeaderBytes() throws {
        let client = try ServerFixture.client(server)
        try served(client, "GET /hello HTTP/1.1\r\nHost: x\r\nX-Drip: ")
        // A byte every 5 s: each gap is well inside the 30 s timeout, the whole head never is.
        try trickle(client, "a")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(408))
        XCTAssertTrue(try client.waitForClose())
    }

    func testHeaderTimeout_NotApplied_WhenHeadArrivesInPiecesPromptly() throws {
        let client = try ServerFixture.client(server)
        try served(client, "GET /hello HT")
        clock.pass(10, on: server)
        try served(client, "TP/1.1\r\nHost: x\r")
        clock.pass(10, on: server)
        try client.send("\n\r\n")
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.okText("hi"))
    }

    func testRequestTimeout_Answers408AndCloses_WhenBodyStalls() throws {
        let client = try ServerFixture.client(server)
        try served(client, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
        // The twin first: short of the 60 s request timeout, the body may still come.
        clock.pass(59, on: server)
        XCTAssertFalse(readable(client))
        clock.pass(2, on: server)
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
        // connection that keeps sending may be closed as idle. On the real clock with an hour's
        // timeouts: a stamp taken after the sweep read the clock, counted as an unsigned
        // wrap-around, is 584 years of idleness, and a busy machine's pauses are not an hour.
        let server = try ServerFixture.start(.testing(timeouts: 3600))
        defer { server.stop() }
        let failures = Mutex<[String]>([])
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
        clock.pass(29, on: server)
        XCTAssertFalse(readable(client), "closed short of the idle timeout")
        clock.pass(2, on: server)
        XCTAssertTrue(try client.waitForClose())
        XCTAssertEqual(server.openConnections, 0)
    }

    func testIdleTimeout_ClosesConnectionThatNeverSendsAByte() throws {
        let client = try ServerFixture.client(server)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 }, "the server took the connection")
        clock.pass(31, on: server)
        XCTAssertTrue(try client.waitForClose())
        // The twin: a connection that spoke within the timeout is served.
        let other = try ServerFixture.client(server)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 })
        clock.pass(29, on: server)
        XCTAssertEqual(try other.roundTrip("GET", "/hello").text, "hi")
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
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 1 })
        clock.pass(29, on: server)
        XCTAssertEqual(server.openConnections, 1, "dropped short of the write timeout")
        clock.pass(2, on: server)
        XCTAssertEqual(server.openConnections, 0, "the stalled client was never dropped")
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
        // An empty line every 5 s: each gap is well inside the 30 s timeouts, and the parser
        // skips empty lines, so none of them is a request; the connection must still go.
        try trickle(client, "\r\n")
        // Nothing to answer (no request began), so no 408: just the end of the stream.
        XCTAssertEqual(try client.readAll(), [])
        XCTAssertEqual(server.openConnections, 0)
    }

    func testHeaderTimeout_Answers408_WhenEmptyLinesPrecedeAStalledRequestLine() throws {
        let client = try ServerFixture.client(server)
        try served(client, "\r\n\r\nGET /hel")
        clock.pass(31, on: server)
        XCTAssertEqual(try client.readResponse().rawText, ServerFixture.protocolError(408))
        XCTAssertTrue(try client.waitForClose())
    }

    func testIdleTimeout_StillServes_WhenEmptyLinesPrecedeARequest() throws {
        let client = try ServerFixture.client(server)
        try served(client, "\r\n\r\n")
        clock.pass(29, on: server)
        try client.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
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
        var buffer = [UInt8](repeating: 0, count: 8192)
        /// Reads what has arrived; true at the end of the stream.
        func readSome() -> Bool {
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 5000) > 0 else { return false }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 || (count < 0 && errno == ECONNRESET) { return true }
            if count > 0 { received += count }
            return false
        }
        // A few KiB read every 5 s: the response keeps moving, and its 30 s still run out.
        for round in 1...6 {
            XCTAssertFalse(readSome(), "dropped after \(round * 5) s, short of the write timeout")
            clock.pass(5, on: server)
        }
        XCTAssertGreaterThan(received, 0, "the response started")
        clock.pass(5, on: server)
        var closed = false
        for _ in 0..<10_000 where !closed { closed = readSome() }
        XCTAssertTrue(closed, "a client that reads slowly kept the connection open after \(received) bytes")
        XCTAssertLessThan(received, 64 * 1024 * 1024)
        XCTAssertEqual(server.openConnections, 0)
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

import Foundation
@testable import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// The event loop knows no protocol: HTTP and SMTP are entries of the server's listener table,
/// each making its own connections (`ServerListener`, `LoopConnection`), so a third protocol, or
/// TLS for one that lacks it, is added in its listener and connection and never in the loop.
final class EventLoopShapeTests: XCTestCase {
    private static let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/MiniHTTP/Server")

    /// The lines of `file` (in Sources/MiniHTTP/Server) that name a protocol (an HTTP or SMTP
    /// type, a TLS session, a limit of either) or make a connection, comments aside. The client's
    /// address (`HTTPPeerAddress`) is any protocol's.
    private func protocolLines(_ file: String) throws -> [String] {
        let text = try String(contentsOf: Self.server.appendingPathComponent(file), encoding: .utf8)
        let named = try NSRegularExpression(pattern: #"(?<![\w.])(HTTP(?!PeerAddress)\w*|SMTP\w*|TLS\w*)|smtp|(?<![\w.])\w*Connection\(|as\?\s*\w*Connection\b"#)
        return text.split(separator: "\n").map(String.init).filter { line in
            !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                && named.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
        }
    }

    func testTheEventLoop_NamesNoProtocol_AndMakesNoConnection() throws {
        XCTAssertEqual(try protocolLines("EventLoop.swift"), [])
        // The twin: the same check finds what the listeners name and make.
        XCTAssertEqual(try protocolLines("SMTPListener.swift").contains { $0.contains("SMTPConnection(") }, true)
        XCTAssertEqual(try protocolLines("ServerListener.swift").contains { $0.contains("Connection(id:") }, true)
        XCTAssertEqual(try protocolLines("Connection.swift").contains { $0.contains("as? Connection") }, true)
        XCTAssertEqual(try protocolLines("ServerListener.swift").contains { $0.contains("HTTPLimits") }, true)
    }

    /// HTTP on ServerFixture's routes, and an echo protocol on a port of its own, on one loop
    /// table under one connection limit.
    private func startWithEcho(connectionLimit: Int = 100) throws -> (HTTPServer, EchoListener) {
        var configuration = ServerFixture.relaxed
        configuration.eventLoopCount = 2
        let http = HTTPListener(socket: try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 16), configuration: configuration,
                                routes: ServerFixture.router().build())
        let echo = EchoListener(socket: try ListeningSocket(host: "127.0.0.1", port: 0, backlog: 16))
        return (try HTTPServer.start(configuration: configuration, http: http, others: [echo], connectionLimit: connectionLimit), echo)
    }

    func testAThirdProtocol_IsAListenerAndAConnection_ServedBesideHTTP() throws {
        let (server, echo) = try startWithEcho()
        defer { server.stop() }
        // Echoed, then closed by the connection itself when the client is done sending.
        let done = try RawHTTPClient(port: echo.socket.port, timeout: 30)
        try done.send("ping\n")
        done.shutdownWrite()
        XCTAssertEqual(String(decoding: try done.readAll(), as: UTF8.self), "ping\n")
        // HTTP on the same loops is untouched, and both count against the one limit.
        let client = try RawHTTPClient(port: echo.socket.port, timeout: 30)
        let http = try ServerFixture.client(server)
        XCTAssertEqual(try http.roundTrip("GET", "/hello").status, 200)
        XCTAssertTrue(ServerFixture.eventually { server.openConnections == 2 })
        // Shutdown drains it as the loop drains every connection: the echo client is let go
        // by its own drain, not by the grace period's end.
        server.shutdown()
        XCTAssertTrue(try client.waitForClose())
        server.waitUntilStopped()
        XCTAssertEqual(echo.drained.withLock { $0 }, 1)
        XCTAssertEqual(echo.abandoned.withLock { $0 }, 0)
    }

    func testAThirdProtocol_IsRefusedPastTheServersConnectionLimit() throws {
        let (server, echo) = try startWithEcho(connectionLimit: 1)
        defer { server.stop() }
        let held = try ServerFixture.client(server)
        XCTAssertEqual(try held.roundTrip("GET", "/hello").status, 200)
        // The one connection is HTTP's: the echo client is accepted and closed, never echoed.
        let refused = try RawHTTPClient(port: echo.socket.port, timeout: 30)
        try? refused.send("ping\n")
        let (bytes, end) = refused.readUntilEnd()
        XCTAssertEqual(bytes, [])
        XCTAssertNotEqual(end, .timedOut, "the client past the limit was kept open")
        XCTAssertEqual(echo.made.withLock { $0 }, 0)
    }
}

/// A protocol of the test's own: every line a client sends comes back. It is one listener and
/// one connection type, and no line of the event loop.
final class EchoListener: ServerListener {
    let socket: ListeningSocket
    let made = Mutex(0)
    let abandoned = Mutex(0)
    let drained = Mutex(0)

    init(socket: ListeningSocket) { self.socket = socket }

    var wantsPeer: Bool { false }
    var shortestTimeout: Double { 60 }
    func admit(_ fd: Int32) -> Bool { true }
    func abandon() { abandoned.withLock { $0 += 1 } }

    func connection(fd: Int32, id: UInt64, peer: HTTPPeerAddress?, loop: EventLoop, now: UInt64) -> (any LoopConnection)? {
        made.withLock { $0 += 1 }
        return EchoConnection(id: id, fd: fd, loop: loop, listener: self)
    }
}

final class EchoConnection: LoopConnection {
    let id: UInt64
    let fd: Int32
    unowned let loop: EventLoop
    let listener: EchoListener
    private(set) var isClosed = false

    init(id: UInt64, fd: Int32, loop: EventLoop, listener: EchoListener) {
        self.id = id
        self.fd = fd
        self.loop = loop
        self.listener = listener
    }

    func start(now: UInt64) {}

    func event(_ flags: UInt32, scratch: UnsafeMutableRawBufferPointer, now: UInt64) {
        guard let count = try? Syscall.read(fd, scratch.baseAddress!, scratch.count), count > 0 else {
            loop.close(self)
            return
        }
        // A test's few bytes fit the socket's buffer at once.
        _ = try? Syscall.send(fd, scratch.baseAddress!, count)
    }

    func checkTimeouts(now: UInt64) {}
    func timerFired(now: UInt64) {}
    func drain(now: UInt64) {
        listener.drained.withLock { $0 += 1 }
        loop.close(self)
    }
    func willClose() { isClosed = true }
}

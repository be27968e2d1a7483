import Foundation
import Glibc
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// An error handlers throw that knows its response (the `HTTPResponseError` path).
struct TeapotError: HTTPResponseError {
    /// A 418 with a fixed body.
    var response: HTTPResponse { .text("short and stout\n", status: HTTPStatus(418)) }
}

/// An error that knows nothing of HTTP (the 500 path).
struct UnexpectedError: Error {}

/// Live servers on port 0 with one fixed set of routes, and the helpers the server tests share.
enum ServerFixture {
    /// Routes every live-server test uses:
    /// - `GET /hello` (immediate) → `hi`
    /// - `GET /slow` (deferred, sleeps first) → `slow`
    /// - `POST /echo` (deferred) → the body
    /// - `POST /length` (immediate) → the body's byte count
    /// - `GET /big?bytes=N` (immediate) → N bytes of `x`
    /// - `GET /gated` (deferred) → `gated`, once `gate` opens
    /// - `GET /teapot`, `GET /teapot-deferred` → `TeapotError`; `GET /crash`, `GET /crash-deferred` → `UnexpectedError`
    static func router(gate: Gate = Gate()) -> Router {
        var router = Router()
        router.add(.get, "/hello", immediate: { _ in .text("hi") })
        router.add(.get, "/slow", deferred: { _ in
            try await Task.sleep(for: .milliseconds(100))
            return .text("slow")
        })
        router.add(.post, "/echo", deferred: { request in .text(String(decoding: request.body, as: UTF8.self)) })
        router.add(.post, "/length", immediate: { request in .text("\(request.body.count)") })
        router.add(.get, "/big", immediate: { request in
            let count = try request.queryParameters()["bytes"].flatMap { Int($0) } ?? 0
            return HTTPResponse(body: [UInt8](repeating: UInt8(ascii: "x"), count: count))
        })
        router.add(.get, "/gated", deferred: { _ in
            try await gate.pass()
            return .text("gated")
        })
        router.add(.get, "/teapot", immediate: { _ in throw TeapotError() })
        router.add(.get, "/teapot-deferred", deferred: { _ in throw TeapotError() })
        router.add(.get, "/crash", immediate: { _ in throw UnexpectedError() })
        router.add(.get, "/crash-deferred", deferred: { _ in throw UnexpectedError() })
        return router
    }

    /// Timeouts long enough that a busy machine never trips them in tests that are not about them.
    static let relaxed = HTTPServerConfiguration.testing(timeouts: 5)

    /// Starts a server with `router()` (or `router`) on an ephemeral loopback port.
    static func start(_ configuration: HTTPServerConfiguration = relaxed, gate: Gate = Gate(), router: Router? = nil) throws -> HTTPServer {
        try HTTPServer.start(configuration: configuration, routes: (router ?? self.router(gate: gate)).build())
    }

    /// A client with a short read timeout, so a missing response fails the test instead of hanging it.
    static func client(_ server: HTTPServer, host: String = "127.0.0.1", timeout: Double = 5) throws -> RawHTTPClient {
        try RawHTTPClient(host: host, port: server.port, timeout: timeout)
    }

    /// The exact bytes the HTTP layer sends for its own protocol errors, which close the connection.
    static func protocolError(_ code: Int) -> String {
        let status = HTTPStatus(code)
        let body = "\(code) \(status.reason)\n"
        return "HTTP/1.1 \(code) \(status.reason)\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
    }

    /// The exact bytes of a keep-alive `text/plain` 200.
    static func okText(_ text: String) -> String {
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(text.utf8.count)\r\n\r\n\(text)"
    }

    /// The send and receive queues (bytes waiting in the kernel) of the established loopback TCP
    /// socket from `localPort` to `remotePort`, as `/proc/net/tcp` lists them; nil when none.
    static func tcpQueues(localPort: Int, remotePort: Int) -> (send: Int, receive: Int)? {
        // Read to the end: Foundation's file readers trust the size /proc reports, and stop at one page.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp"),
              let data = try? handle.readToEnd() else { return nil }
        try? handle.close()
        // The line's "LOCAL:PORT REMOTE:PORT 01 TX:RX": found with Data's own search, since a
        // table of thousands of TIME_WAIT lines split into strings took a debug build 0.5 s a look.
        let hex = { (port: Int) in String(String(port, radix: 16, uppercase: true).suffix(4)).leftPadded(to: 4) }
        let needle = Data(":\(hex(localPort)) 0100007F:\(hex(remotePort)) 01 ".utf8)
        guard let found = data.range(of: needle), data.count >= found.upperBound + 17 else { return nil }
        let queues = String(decoding: data[found.upperBound..<(found.upperBound + 17)], as: UTF8.self).split(separator: ":")
        guard queues.count == 2, let send = Int(queues[0], radix: 16), let receive = Int(queues[1], radix: 16) else { return nil }
        return (send, receive)
    }

    /// Bytes sent on the loopback connection from `client` to the server's `port` that the
    /// server's loop has not read yet: what waits in the server's receive queue and, held back by
    /// Nagle's algorithm, in the client's send queue (`Int.max` while either socket is missing).
    /// 0 once the loop took everything.
    static func unread(by port: Int, from client: RawHTTPClient) -> Int {
        unread(by: port, fromPort: localPort(client))
    }

    /// `unread(by:from:)` for a client on `fromPort`.
    static func unread(by port: Int, fromPort: Int) -> Int {
        guard let server = tcpQueues(localPort: port, remotePort: fromPort),
              let client = tcpQueues(localPort: fromPort, remotePort: port) else { return .max }
        return server.receive + client.send
    }

    /// Polls `condition` every 10 ms for at most `seconds`; true as soon as it holds. A bound against
    /// a hang, not a timing assertion: tests assert on the condition, never on how long it took, and
    /// the bound is wide because a loaded machine may need much of it.
    static func eventually(seconds: Double = 120, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Descriptors this process has open (`/proc/self/fd`).
    static func openDescriptorCount() throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    }

    /// Sends bytes and ignores a reset or broken pipe: a server that rejects a request early may
    /// close while the client is still sending, and the test then reads the answer it left.
    static func sendIgnoringDisconnect(_ client: RawHTTPClient, _ bytes: [UInt8]) {
        do {
            try client.send(bytes)
        } catch RawHTTPClient.Failure.system(_, let code) where code == EPIPE || code == ECONNRESET {
            return
        } catch {
            XCTFail("send failed: \(error)")
        }
    }

    /// Asserts that connecting to `port` is refused (nothing listens there).
    static func assertRefused(port: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(RawHTTPClient.connectionFailure(port: port)?.description, RawHTTPClient.Failure.system("connect", ECONNREFUSED).description,
                       "connecting to port \(port)", file: file, line: line)
    }

    /// The local port of `client`'s socket, IPv4 or IPv6; -1 when the kernel does not say.
    static func localPort(_ client: RawHTTPClient) -> Int {
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(client.fd, $0, &length) }
        }
        guard result == 0 else { return -1 }
        switch Int32(address.ss_family) {
        case AF_INET: return Int(UInt16(bigEndian: withUnsafeBytes(of: address) { $0.load(as: sockaddr_in.self) }.sin_port))
        case AF_INET6: return Int(UInt16(bigEndian: withUnsafeBytes(of: address) { $0.load(as: sockaddr_in6.self) }.sin6_port))
        default: return -1
        }
    }

    /// Makes the next `close()` of `client` send a TCP reset instead of a FIN (SO_LINGER 0).
    static func resetOnClose(_ client: RawHTTPClient) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(client.fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }
}

private extension String {
    /// The string with "0"s before it up to `count` characters.
    func leftPadded(to count: Int) -> String { String(repeating: "0", count: max(0, count - self.count)) + self }
}

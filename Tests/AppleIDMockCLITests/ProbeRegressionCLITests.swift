import AppleIDMock
import Foundation
import Glibc
import MiniHTTPTesting
import XCTest

/// The probe's findings that show at the process level (shared/reports/robustness-probe-2026-11-22.md);
/// each would fail at d1d459f.
final class ProbeRegressionCLITests: XCTestCase {
    /// F1: clients fill the descriptor table of a cold server, then the first deferred request
    /// arrives. It used to kill the process (libdispatch could not make its descriptors).
    func testServe_SurvivesAFullDescriptorTableBeforeItsFirstDeferredRequest_F1() throws {
        let server = try CLIProcess.Server(["--port", "0"], descriptorLimit: 64)
        let port = try XCTUnwrap(server.port, server.firstLine)
        var clients: [RawHTTPClient] = []
        for _ in 0..<120 { clients.append(try RawHTTPClient(port: port)) }
        let body = #"{"user":"alice"}"#
        try clients[0].send("POST /__mock/id-token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        let answer = try clients[0].readResponse()
        XCTAssertEqual(answer.status, 200, answer.text)
        for client in clients { client.close() }
        // The twin: once the table has room again, new clients are served too.
        XCTAssertEqual(try RawHTTPClient(port: port).roundTrip("GET", "/auth/keys").status, 200)
        XCTAssertEqual(server.stop().status, 0)
    }

    /// F9: only the built-in default falls back (to the built-in copies of the committed keys,
    /// since N9), and it says so; a scenario naming a missing directory fails `scenario check`
    /// and `serve` with exit 2.
    func testKeysFallback_SpeaksForTheDefault_AndANamedMissingDirectoryFails_F9() throws {
        let server = try CLIProcess.Server(["--port", "0"], directory: NSTemporaryDirectory())
        XCTAssertNotNil(server.port, server.firstLine)
        let stopped = server.stop()
        XCTAssertEqual(stopped.status, 0)
        XCTAssertEqual(stopped.stderr,
                       "appleid-mock: no Keys/signing in the working directory; serving the built-in copies of its test keys (W2ek7HdPaL, Ymq4vB9xTz, r8TcNf3QsJ)\n")

        let file = NSTemporaryDirectory() + "probe-f9-cli-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        var scenario = Scenario.default
        scenario.signingKeys.directory = "/nonexistent/typo-keys"
        try scenario.prettyJSON.write(toFile: file, atomically: true, encoding: .utf8)
        let expected = "signing_keys.directory: expected an existing directory of <kid>.pem files, found \"/nonexistent/typo-keys\"\n"
        let check = try CLIProcess.run(["scenario", "check", file])
        XCTAssertEqual(check.status, 2)
        XCTAssertEqual(check.stderr, "appleid-mock: \(file):\n\(expected)")
        let serve = try CLIProcess.run(["serve", "--port", "0", "--scenario", file])
        XCTAssertEqual(serve.status, 2)
        XCTAssertEqual(serve.stderr, "appleid-mock: scenario \(file):\n\(expected)")
    }

    /// F15: a --host that is no address is bad input (exit 2), not a runtime failure.
    func testServe_RejectsHostThatIsNoAddress_WithExitTwo_F15() throws {
        for host in ["example.com", "999.1.1.1", "::g"] {
            let result = try CLIProcess.run(["serve", "--host", host, "--port", "0"])
            XCTAssertEqual(result.status, 2, host)
            XCTAssertTrue(result.stderr.hasPrefix("appleid-mock: --host expects an IPv4 or IPv6 address or localhost, got \"\(host)\"\n"), result.stderr)
        }
        let bad = try CLIProcess.run(["serve", "--allowed-host", "bad name!", "--port", "0"])
        XCTAssertEqual(bad.status, 2)
        let twin = try CLIProcess.Server(["--host", "::1", "--port", "0", "--allowed-host", "appleid-mock,mock.test"])
        XCTAssertTrue(twin.firstLine.hasPrefix("listening on http://[::1]:"), twin.firstLine)
        XCTAssertEqual(twin.stop().status, 0)
    }

    /// P10: `--host [::1]` (bracketed, as in a URL) prints and publishes `http://[::1]:PORT`, as
    /// `--host ::1` does; the CLI's own `health --server` takes the printed URL.
    func testServe_BracketedIPv6Host_IsPrintedAndPublishedWithOneBracketPair_P10() throws {
        for host in ["[::1]", "::1"] {
            let server = try CLIProcess.Server(["--host", host, "--port", "0"])
            defer { _ = server.stop() }
            let port = try XCTUnwrap(server.port, server.firstLine)
            XCTAssertEqual(server.firstLine, "listening on http://[::1]:\(port)", host)
            let health = try CLIProcess.run(["health", "--server", "http://[::1]:\(port)"])
            XCTAssertEqual(health.status, 0, health.stderr)
            let discovery = try RawHTTPClient(host: "::1", port: port).roundTrip("GET", "/.well-known/openid-configuration").text
            XCTAssertTrue(discovery.contains("\"authorization_endpoint\":\"http://[::1]:\(port)/auth/authorize\""), discovery)
            XCTAssertFalse(discovery.contains("[["), discovery)
        }
        // The twin: a bracket pair that is not a whole address is still refused.
        let refused = try CLIProcess.run(["serve", "--host", "[::1", "--port", "0"])
        XCTAssertEqual(refused.status, 2)
    }

    /// F16: the sign-in CLI reads exactly Content-Length bytes and gives up at its deadline.
    func testSignIn_HonoursContentLength_AndHasADeadline_F16() throws {
        let framed = try FakeServer(answer: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", drip: true)
        let done = try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.app", "--server", "http://127.0.0.1:\(framed.port)"])
        XCTAssertEqual(done.status, 0, done.stderr)
        XCTAssertEqual(done.stdout, "{}\n")
        framed.stop()

        let trickle = try FakeServer(answer: "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", drip: true)
        let cut = try CLIProcess.run(["sign-in", "--user", "alice", "--client", "com.example.app", "--timeout", "1",
                                      "--server", "http://127.0.0.1:\(trickle.port)"])
        XCTAssertEqual(cut.status, 1)
        XCTAssertEqual(cut.stderr, "appleid-mock: cannot reach http://127.0.0.1:\(trickle.port): timed out: waiting for the answer\n")
        trickle.stop()
    }

    /// F17: SIGHUP drains and exits 0 like SIGTERM (it used to kill the server with 129).
    func testServe_DrainsOnSIGHUP_F17() throws {
        for stop in [SIGHUP, SIGUSR1] {
            let server = try CLIProcess.Server(["--port", "0"])
            let port = try XCTUnwrap(server.port, server.firstLine)
            let client = try RawHTTPClient(port: port)
            XCTAssertEqual(try client.roundTrip("GET", "/auth/keys").status, 200)
            XCTAssertEqual(server.stop(signal: stop).status, 0)
        }
    }
}

/// A TCP server on 127.0.0.1 that answers every connection with fixed bytes and then, when
/// `drip` is set, keeps sending a byte every 50 ms without ever closing: a wedged server.
private final class FakeServer: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private let stopped = NSLock()
    private var isStopped = false
    private var answer: [UInt8] = []
    private var drip = false

    init(answer: String, drip: Bool) throws {
        let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        fd = socketFD
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketFD, $0, length) == 0 && listen(socketFD, 8) == 0 && getsockname(socketFD, $0, &length) == 0
            }
        }
        guard bound else { throw RawHTTPClient.Failure.system("bind", errno) }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.answer = Array(answer.utf8)
        self.drip = drip
        Thread.detachNewThread { [self] in serve() }
    }

    private func serve() {
        let listener = fd
        let bytes = answer
        while !self.isDone {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                while drip && !self.isDone {
                    var byte: UInt8 = 32
                    guard send(client, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                    usleep(50_000)
                }
                close(client)
        }
    }

    private var isDone: Bool { stopped.withLock { isStopped } }

    func stop() {
        stopped.withLock { isStopped = true }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}

import Foundation
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// `HTTPServerConfiguration.log` (issue 46 item 4): every line MiniHTTP writes for what it cannot
/// answer for reaches the configured log, not standard error; a loop whose `epoll_wait` fails says
/// so there and ends instead of spinning; and the loop makes no socket call but through `Syscall`.
final class ServerLogTests: XCTestCase {
    /// The lines a server logged.
    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        var sink: @Sendable (String) -> Void { { [self] line in lines.withLock { $0.append(line) } } }
        func take() -> [String] {
            lines.withLock { lines in
                defer { lines = [] }
                return lines
            }
        }
    }

    private func server(logging lines: Lines) throws -> HTTPServer {
        var configuration = ServerFixture.relaxed
        configuration.eventLoopCount = 1
        configuration.log = lines.sink
        var router = ServerFixture.router()
        router.add(.get, "/split-header", immediate: { _ in HTTPResponse(status: .ok, headers: ["X-Split": "a\r\nInjected: yes"]) })
        let server = try ServerFixture.start(configuration, router: router)
        addTeardownBlock { await server.stop() }
        return server
    }

    func testHandlerErrorsAndRefusedResponses_ReachTheConfiguredLog() throws {
        let lines = Lines()
        let client = try ServerFixture.client(try server(logging: lines))
        XCTAssertEqual(try client.roundTrip("GET", "/crash").status, 500)
        XCTAssertEqual(try client.roundTrip("GET", "/crash-deferred").status, 500)
        XCTAssertEqual(try client.roundTrip("GET", "/split-header").status, 500)
        XCTAssertEqual(lines.take(), ["handler error: UnexpectedError()", "handler error: UnexpectedError()",
                                      #"refused a 200 response: value of header X-Split has CR, LF, NUL or another control character; sent 500 instead"#])
        // The twins: an error that knows its answer, and a plain answer, log nothing.
        XCTAssertEqual(try client.roundTrip("GET", "/teapot").status, 418)
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
        XCTAssertEqual(lines.take(), [])
    }

    func testALoopWhoseWaitFails_LogsItAndEnds_ClosingItsConnections() throws {
        let lines = Lines()
        let server = try server(logging: lines)
        let client = try ServerFixture.client(server)
        XCTAssertEqual(try client.roundTrip("GET", "/hello").text, "hi")
        XCTAssertEqual(lines.take(), [], "a loop that waits well logs nothing")
        server.spoilEventLoopWaits()
        // The kept-alive connection is closed as the loop ends, and the server stops (no spin).
        XCTAssertTrue(try client.waitForClose())
        server.waitUntilStopped()
        XCTAssertEqual(lines.take(), ["epoll_wait: Invalid argument (errno 22): an event loop stops"])
    }

    func testTheServersSocketCalls_GoThroughSyscall() throws {
        let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/MiniHTTP/Server")
        let raw = try NSRegularExpression(pattern: #"(?<![\w.])(epoll_wait|mh_epoll_ctl|setsockopt|getsockopt|Glibc\.(read|write|close|shutdown|send|recv))\("#)
        func rawCalls(_ text: String) -> [String] {
            text.split(separator: "\n").map(String.init).filter { line in
                !line.trimmingCharacters(in: .whitespaces).hasPrefix("//")
                    && raw.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) != nil
            }
        }
        var found: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: server.path) where name.hasSuffix(".swift") && name != "HTTPServerLog.swift" {
            found += rawCalls(try String(contentsOf: server.appendingPathComponent(name), encoding: .utf8)).map { "\(name): \($0)" }
        }
        XCTAssertEqual(found, [], "a socket call outside Syscall")
        // The twin: the same check finds the calls Syscall itself makes.
        let syscall = try String(contentsOf: server.deletingLastPathComponent().appendingPathComponent("Socket/Syscall.swift"), encoding: .utf8)
        XCTAssertGreaterThanOrEqual(rawCalls(syscall).count, 4)
    }
}

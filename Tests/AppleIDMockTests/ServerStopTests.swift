@testable import AppleIDMock
import Foundation
import MiniHTTPTesting
import XCTest

/// `AppleIDMockServer.stop()`: async and holding no thread, with the blocking variant kept for
/// synchronous code; both refuse new connections once they return.
final class ServerStopTests: XCTestCase {
    func testStop_ReturnsInAsyncCode_AndNewConnectionsAreRefused() async throws {
        let server = try startMock()
        let port = server.port
        let client = try RawHTTPClient(port: port)
        XCTAssertEqual(try client.roundTrip("GET", "/__mock/health").status, 200)
        await server.stop()
        XCTAssertTrue(try client.waitForClose(), "the idle keep-alive connection is closed")
        assertRefused(port: port)
        // Twice is safe.
        await server.stop()
    }

    func testStop_FromSynchronousCode_BlocksUntilStopped_AndNewConnectionsAreRefused() throws {
        let server = try startMock()
        XCTAssertEqual(try server.get("/__mock/health").status, 200)
        server.stop()
        assertRefused(port: server.port)
    }

    func testStop_EndsAfterTheGrace_AbandoningANotificationToAReceiverThatNeverAnswers() async throws {
        let receiver = try SilentListener()
        let server = try startMock {
            $0.scenario.teams[0].notificationURL = "http://127.0.0.1:\(receiver.port)/apple"
            $0.notificationResponseTimeout = 60
            $0.notificationShutdownGrace = 0.3
        }
        _ = try await server.signInNative(user: "alice", clientID: "com.example.app")
        let fired = try await server.fireEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        let id = try XCTUnwrap(fired)
        // The request is on the wire, and its answer never comes.
        try await eventually { server.notifications.records().first?.dueAt == .infinity }

        let started = ContinuousClock.now
        await server.stop()
        XCTAssertGreaterThanOrEqual(started.duration(to: .now), .milliseconds(300), "the grace was given")
        let record = try XCTUnwrap(server.notifications.records().first)
        XCTAssertEqual(record.id, id)
        XCTAssertEqual(record.outcome, .abandoned)
        assertRefused(port: server.port)
    }

    private func assertRefused(port: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(RawHTTPClient.connectionFailure(port: port)?.description, RawHTTPClient.Failure.system("connect", ECONNREFUSED).description,
                       "connecting to port \(port)", file: file, line: line)
    }
}

/// A loopback port whose connections the kernel completes (the listen backlog) and nobody ever
/// accepts or answers: a notification receiver that hangs. Closed when released.
private final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound, listen(fd, 8) == 0 else { throw POSIXError(.EADDRNOTAVAIL) }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}

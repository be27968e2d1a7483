@testable import AppleIDMock
import Foundation
import XCTest

/// Which listening addresses the server calls "beyond this machine" (probe N16).
final class ListenAddressTests: XCTestCase {
    func testIsLoopback_AcceptsEveryLoopbackSpelling_AndRefusesTheRest() {
        for host in ["127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "[::1]", "0:0:0:0:0:0:0:1", "[0:0:0:0:0:0:0:1]", "::ffff:127.0.0.1", "localhost"] {
            XCTAssertTrue(AppleIDMockServer.isLoopback(host), host)
        }
        // The twins: every interface, other addresses, names that only look like loopback.
        for host in ["0.0.0.0", "::", "[::]", "10.0.0.5", "128.0.0.1", "::2", "[::1", "127.evil.example", "127.0.0.1.evil.example", ""] {
            XCTAssertFalse(AppleIDMockServer.isLoopback(host), host)
        }
    }

    func testServer_DoesNotWarn_WhenListeningOnAnotherLoopbackAddress() throws {
        let lines = LogLines()
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.host = "127.0.0.2"
        configuration.port = 0
        configuration.log = { lines.append($0) }
        let server = try AppleIDMockServer.start(configuration)
        server.stop()
        XCTAssertFalse(lines.all.contains { $0.contains("with no --control-token") }, "\(lines.all)")
    }
}

/// Log lines collected from any thread.
private final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) { lock.withLock { lines.append(line) } }

    var all: [String] { lock.withLock { lines } }
}

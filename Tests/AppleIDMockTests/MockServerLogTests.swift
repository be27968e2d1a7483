@testable import AppleIDMock
import MiniHTTP
import XCTest

/// The mock hands MiniHTTP its own log (issue 46 item 4): what the server's loops cannot answer
/// for reaches `AppleIDMockConfiguration.log` at `error`, marked `MiniHTTP:`, never raw stderr.
final class MockServerLogTests: XCTestCase {
    func testTheServersLoopLines_ReachTheMocksLog_AtEveryLevel() async throws {
        for level in [AppleIDMockLogLevel.error, .debug] {
            let capture = LogCapture()
            let server = try startMock {
                $0.http.eventLoopCount = 1
                $0.logLevel = level
                $0.log = capture.sink
            }
            _ = capture.take()
            server.http.spoilEventLoopWaits()
            await server.http.stopped()
            XCTAssertEqual(capture.take().filter { $0.hasPrefix("MiniHTTP:") }, ["MiniHTTP: epoll_wait: Invalid argument (errno 22): an event loop stops"], "\(level)")
            await server.stop()
        }
    }
}

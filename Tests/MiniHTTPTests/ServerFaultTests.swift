import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Faults found by abusing the live server (the abuse itself is in AppleIDMockTests'
/// `FaultToleranceTests`); each is pinned here at the HTTP layer.
final class ServerFaultTests: XCTestCase {
    func testKeepAlive_StaysOpen_AfterDeferredResponses_WhenTimeoutSweepFallsInTheSameLoopTurn() throws {
        // Timeouts of 0.5 s sweep every 125 ms; /slow takes 100 ms, so most answers are written in
        // the loop turn that also sweeps. The sweep's clock reading is older than the time the
        // answer was written: the idle check must not see that as a connection idle for ages.
        let server = try ServerFixture.start(.testing(timeouts: 0.5))
        defer { server.stop() }
        let client = try ServerFixture.client(server)
        for index in 0..<8 {
            XCTAssertEqual(try client.roundTrip("GET", "/slow").rawText, ServerFixture.okText("slow"), "request \(index + 1)")
        }
        XCTAssertEqual(try client.roundTrip("GET", "/hello").rawText, ServerFixture.okText("hi"))
    }
}

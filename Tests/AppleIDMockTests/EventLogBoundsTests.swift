@testable import AppleIDMock
import XCTest

/// `EventLog.page(after:)` takes any `after` a caller sends (`GET /__mock/events?after=`, up to
/// UInt64.max): schemathesis found that `after=18446744073709551615` crashed the mock with an
/// arithmetic overflow (issue 21 item 3).
final class EventLogBoundsTests: XCTestCase {
    /// A log keeping 3 events that has recorded 5 (so its window starts past the first slot).
    private func fullLog() -> EventLog {
        var log = EventLog(capacity: 3)
        for second in 1...5 { _ = log.append(.keyScheduleAdvanced(at: Int64(second)), at: Double(second)) }
        return log
    }

    func testPage_AfterTheLargestSequence_IsEmpty_AndMissesNothing() {
        let log = fullLog()
        for after in [UInt64.max, UInt64.max - 1, UInt64(Int64.max), 6] {
            let page = log.page(after: after, limit: 1000) { _ in true }
            XCTAssertEqual(page.events.count, 0, "after=\(after)")
            XCTAssertEqual(page.missed, 0, "after=\(after)")
        }
        // The twin: within range, the kept events after `after` and what fell out before them.
        XCTAssertEqual(log.page(after: 3, limit: 1000) { _ in true }.events.map(\.sequence), [4, 5])
        let behind = log.page(after: 0, limit: 1000) { _ in true }
        XCTAssertEqual(behind.events.map(\.sequence), [3, 4, 5])
        XCTAssertEqual(behind.missed, 2)
    }

    func testEventFeed_AnswersTheLargestAfter_WithAnEmptyPage() async throws {
        let mock = try inMemoryMock()
        _ = await mock.postJSON("/__mock/clock", #"{"advance": 60}"#)
        for query in ["?after=18446744073709551615", "?after=18446744073709551615&wait=0.01", "?after=18446744073709551614&limit=1"] {
            let response = await mock.get("/__mock/events" + query)
            XCTAssertEqual(response.status.code, 200, query)
            XCTAssertTrue(response.text.hasPrefix(#"{"events":[],"#), response.text)
        }
        await mock.stop()
    }
}

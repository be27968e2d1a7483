import AppleIDMock
import JOSE
import XCTest

// Waiting on what the mock signals, over its long-poll routes, instead of sleeping.

extension MockClient {
    /// The delivery log once it holds at least `count` records and none is pending: each round
    /// holds `GET /__mock/notifications?after=&wait=` in the mock until a record after the
    /// first pending one settles. Fails the test after `seconds`.
    func settledNotifications(_ count: Int, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) async throws -> [JSONObject] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            let log = try await get("/__mock/notifications")
            XCTAssertEqual(log.status, 200, log.text, file: file, line: line)
            let records = (try jsonObject(log.body, file: file, line: line)["notifications"]?.arrayValue ?? []).compactMap(\.objectValue)
            let pending = records.filter { $0["outcome"] == "pending" }
            if records.count >= count && pending.isEmpty { return records }
            guard ContinuousClock.now < deadline else {
                XCTFail("\(records.count) records, \(pending.count) pending after \(seconds) s", file: file, line: line)
                return records
            }
            let after = max(0, (pending.first?["id"]?.intValue ?? records.last?["id"]?.intValue ?? 0) - 1)
            _ = try await get("/__mock/notifications?after=\(after)&wait=1")
        }
    }

    /// The `fault-fired` events once there are at least `count`: `GET /__mock/events?type=fault-fired&wait=`
    /// holds in the mock until one lands. Fails the test after `seconds`.
    func firedFaults(_ count: Int = 1, seconds: Double = 10, file: StaticString = #filePath, line: UInt = #line) async throws -> [JSONObject] {
        let deadline = ContinuousClock.now + .seconds(seconds)
        var fired: [JSONObject] = []
        while fired.count < count {
            guard ContinuousClock.now < deadline else {
                XCTFail("\(fired.count) faults fired after \(seconds) s", file: file, line: line)
                return fired
            }
            let after = fired.last?["sequence"]?.intValue ?? 0
            let page = try await get("/__mock/events?type=fault-fired&after=\(after)&wait=1")
            XCTAssertEqual(page.status, 200, page.text, file: file, line: line)
            fired += (try jsonObject(page.body, file: file, line: line)["events"]?.arrayValue ?? []).compactMap(\.objectValue)
        }
        return fired
    }
}

import AppleIDMock
import Foundation
import JOSE
import XCTest

/// The knob `refresh_throttle` (apple-behaviour.md §9): Apple asks backends to validate a
/// refresh token "up to once a day" and "may throttle" more, with no throttled answer on record.
/// Off (today's default), every refresh works; set, one refresh token's refreshes past
/// `per_day` within a mock day (UTC) answer the knob's error until the next mock day.
final class RefreshThrottleTests: XCTestCase {
    private let refreshKeys = ["access_token", "token_type", "expires_in", "id_token"]
    /// Seconds from `frozenNow` (2023-11-14T22:13:20Z) to the next mock day.
    private let toNextDay: Double = 6_400

    private func refreshToken(_ mock: any MockClient, user: String = "alice") async throws -> String {
        let tokens = try await mock.webTokens(user: user)
        return try XCTUnwrap(tokens["refresh_token"]?.stringValue)
    }

    private func counted(_ mock: any MockClient) async throws -> [String] {
        let feed = try await mock.get("/__mock/events?type=refresh-counted")
        let events = try XCTUnwrap(try jsonObject(feed.body)["events"]?.arrayValue)
        return events.map { event in
            let object = event.objectValue ?? [:]
            return "\(object["consent_id"]?.intValue ?? -1) \(object["day"]?.stringValue ?? "?") \(object["count"]?.intValue ?? -1)"
        }
    }

    func testOff_EveryRefreshOfADayWorks_AndNoneIsCounted() async throws {
        let mock = try frozenClient()
        let token = try await refreshToken(mock)
        for _ in 0..<5 { try assertTokenAnswer(try await mock.refresh(token), keys: refreshKeys) }
        let none = try await counted(mock)
        XCTAssertEqual(none, [])
    }

    func testOn_PastPerDay_OneTokenAnswersTheKnobsError_UntilTheNextMockDay_OtherTokensWork() async throws {
        let mock = try frozenClient { $0.scenario.compatibility.refreshThrottle = RefreshThrottle(perDay: 2, error: "invalid_grant") }
        let alice = try await refreshToken(mock)
        try assertTokenAnswer(try await mock.refresh(alice), keys: refreshKeys)
        try assertTokenAnswer(try await mock.refresh(alice), keys: refreshKeys)
        assertAppleError(try await mock.refresh(alice), #"{"error":"invalid_grant"}"#)
        // Another token is counted on its own: bob's, and a second sign-in of alice's.
        let bob = try await refreshToken(mock, user: "bob")
        try assertTokenAnswer(try await mock.refresh(bob), keys: refreshKeys)
        try await mock.advanceClock(by: 1)
        let aliceAgain = try await refreshToken(mock)
        XCTAssertNotEqual(aliceAgain, alice)
        try assertTokenAnswer(try await mock.refresh(aliceAgain), keys: refreshKeys)
        // One second before the mock day ends, still refused; at midnight UTC, it works again.
        try await mock.advanceClock(by: toNextDay - 2)
        assertAppleError(try await mock.refresh(alice), #"{"error":"invalid_grant"}"#)
        try await mock.advanceClock(by: 1)
        try assertTokenAnswer(try await mock.refresh(alice), keys: refreshKeys)
        // Only the refreshes that worked were counted.
        let counts = try await counted(mock)
        XCTAssertEqual(counts, ["1 2023-11-14 1", "1 2023-11-14 2", "2 2023-11-14 1", "1 2023-11-14 1", "1 2023-11-15 1"])
    }

    func testOn_AnswersTheErrorTheKnobNames_AndTheLogSaysWhenItWorksAgain() async throws {
        let capture = LogCapture()
        let mock = try frozenClient {
            $0.scenario.compatibility.refreshThrottle = RefreshThrottle(perDay: 1, error: "invalid_request")
            $0.log = capture.sink
        }
        let token = try await refreshToken(mock)
        try assertTokenAnswer(try await mock.refresh(token), keys: refreshKeys)
        _ = capture.take()
        assertAppleError(try await mock.refresh(token), #"{"error":"invalid_request"}"#)
        XCTAssertEqual(capture.take(), ["refused POST /auth/token: invalid_request — refresh_token refreshed 1 times on mock day 2023-11-14 (UTC), the most "
                                        + "compatibility.refresh_throttle.per_day allows: it works again from 2023-11-15T00:00:00Z mock time"])
    }

    func testOn_TheCountSurvivesARestartFromTheStateFile() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("throttle-\(UUID().uuidString).sqlite").path
        addTeardownBlock { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let adjust: (inout AppleIDMockConfiguration) -> Void = {
            $0.scenario.compatibility.refreshThrottle = RefreshThrottle(perDay: 2, error: "invalid_grant")
            $0.statePath = path
        }
        let first = try frozenClient(.inMemory, adjust)
        let alice = try await refreshToken(first)
        let bob = try await refreshToken(first, user: "bob")
        try assertTokenAnswer(try await first.refresh(alice), keys: refreshKeys)
        try assertTokenAnswer(try await first.refresh(alice), keys: refreshKeys)
        try assertTokenAnswer(try await first.refresh(bob), keys: refreshKeys)
        await first.stop()
        let second = try frozenClient(.inMemory, adjust)
        assertAppleError(try await second.refresh(alice), #"{"error":"invalid_grant"}"#)
        // The twin: bob's token had one refresh left, and has it still.
        try assertTokenAnswer(try await second.refresh(bob), keys: refreshKeys)
        assertAppleError(try await second.refresh(bob), #"{"error":"invalid_grant"}"#)
    }

    func testScenario_TakesAThrottleOrNull_AndRefusesEachBadValueNamingItsPath() throws {
        // The built-in scenario with the knob set to `knob`.
        func load(_ knob: String) throws -> Scenario {
            guard case .object(var scenario) = try JSONParser.parse(Array(Scenario.default.prettyJSON.utf8)),
                  case .object(var knobs)? = scenario["compatibility"] else { throw XCTSkip("the built-in scenario is not an object") }
            knobs["refresh_throttle"] = try JSONParser.parse(Array(knob.utf8))
            scenario["compatibility"] = .object(knobs)
            return try Scenario.load(json: JSONWriter.compact(.object(scenario)))
        }
        XCTAssertEqual(try load(#"{"per_day": 1}"#).compatibility.refreshThrottle, RefreshThrottle(perDay: 1, error: "invalid_grant"))
        XCTAssertEqual(try load(#"{"per_day": 1000000, "error": "unauthorized_client"}"#).compatibility.refreshThrottle,
                       RefreshThrottle(perDay: 1_000_000, error: "unauthorized_client"))
        XCTAssertNil(try load("null").compatibility.refreshThrottle)
        let refused: [(String, String, String)] = [
            (#"{"per_day": 0}"#, "compatibility.refresh_throttle.per_day", "expected an integer from 1 to 1000000, found 0"),
            (#"{"per_day": 1000001}"#, "compatibility.refresh_throttle.per_day", "expected an integer from 1 to 1000000, found 1000001"),
            (#"{"error": "invalid_grant"}"#, "compatibility.refresh_throttle.per_day", "missing required key"),
            (#"{"per_day": 1, "error": "slow_down"}"#, "compatibility.refresh_throttle.error",
             #"expected "invalid_grant" or "invalid_request" or "invalid_client" or "unauthorized_client""#),
            (#"{"per_day": 1, "status": 429}"#, "compatibility.refresh_throttle.status", "unknown key (expected one of: per_day, error)"),
            ("1", "compatibility.refresh_throttle", #"expected null or an object {"per_day": N, "error": "invalid_grant"}, found a number"#),
        ]
        for (knob, path, message) in refused {
            let error = try XCTUnwrap(assertThrows(try load(knob)) as? ScenarioError, knob)
            XCTAssertEqual(error.problems.map { "\($0.path): \($0.message)" }, ["\(path): \(message)"], knob)
        }
    }
}

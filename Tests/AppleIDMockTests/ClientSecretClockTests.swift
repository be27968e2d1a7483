@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// Issue 18 point 6: `compatibility.client_secret_clock` for a backend that mints its
/// client_secret from real time while a suite moves the mock clock far ahead.
final class ClientSecretClockTests: XCTestCase {
    /// Real time, fixed so the reason lines are exact: 2027-01-15T08:00:00Z.
    private let real: Int64 = 1_800_000_000
    private let fourHundredDays = 400 * 86400.0

    private func start(_ clock: Compatibility.ClientSecretClock?, log: LogCapture) throws -> any MockClient {
        try startClient { [real] configuration in
            configuration.realTime = { Double(real) }
            configuration.log = log.sink
            if let clock { configuration.scenario.compatibility.clientSecretClock = clock }
        }
    }

    /// client_credentials with a secret the backend minted from real time.
    private func post(_ mock: any MockClient, issuedAt: Int64) async throws -> MockAnswer {
        try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret(issuedAt: issuedAt)),
                                            ("grant_type", "client_credentials"), ("scope", "user.migration")])
    }

    func testClientSecretClock_DefaultMock_RefusesARealTimeSecretAfterABigAdvance_WithAHint() async throws {
        let log = LogCapture()
        let mock = try start(nil, log: log)
        assertStatus(try await post(mock, issuedAt: real), 200)
        try await mock.advanceClock(by: fourHundredDays)
        assertAppleError(try await post(mock, issuedAt: real), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(log.take(), [
            "refused POST /auth/token: invalid_client — client_secret expired at mock time 2028-02-19T08:00:00Z (exp 2027-01-15T09:00:00Z)"
                + " (mock clock is 400 days ahead of real time; mint the secret from GET /__mock/clock,"
                + " or set compatibility.client_secret_clock to \"real\")",
        ])
        // The twin minted from the mock clock, as the hint says.
        assertStatus(try await post(mock, issuedAt: (try await mock.now())), 200)
        XCTAssertEqual(log.take(), [])
    }

    func testClientSecretClock_Real_AcceptsARealTimeSecretAfterABigAdvance() async throws {
        let log = LogCapture()
        let mock = try start(.real, log: log)
        try await mock.advanceClock(by: fourHundredDays)
        assertStatus(try await post(mock, issuedAt: real), 200)
        XCTAssertEqual(log.take(), [])
    }

    func testClientSecretClock_Real_StillRefusesAnExpiredSecret() async throws {
        let log = LogCapture()
        let mock = try start(.real, log: log)
        try await mock.advanceClock(by: fourHundredDays)
        assertAppleError(try await post(mock, issuedAt: real - 7200), #"{"error":"invalid_client"}"#)
        assertAppleError(try await post(mock, issuedAt: real + 60), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(log.take(), [
            "refused POST /auth/token: invalid_client — client_secret expired at real time 2027-01-15T08:00:00Z (exp 2027-01-15T07:00:00Z)",
            "refused POST /auth/token: invalid_client — client_secret iat 2027-01-15T08:01:00Z is in the future at real time 2027-01-15T08:00:00Z",
        ])
    }

    func testClientSecretClock_BadValue_IsAScenarioErrorNamingThePathAndTheChoices() async throws {
        guard case .object(var object) = Scenario.default.json, case .object(var knobs)? = object["compatibility"] else {
            return XCTFail("the default scenario has a compatibility object")
        }
        knobs["client_secret_clock"] = "wall"
        object["compatibility"] = .object(knobs)
        XCTAssertThrowsError(try Scenario.load(json: JSONWriter.compact(.object(object)))) { error in
            XCTAssertEqual((error as? ScenarioError)?.problems.map(\.description),
                           ["compatibility.client_secret_clock: expected \"mock\" or \"real\", found \"wall\""])
        }
        // The twin: each allowed value loads, and the default scenario prints the knob.
        for value in ["mock", "real"] {
            knobs["client_secret_clock"] = .string(value)
            object["compatibility"] = .object(knobs)
            XCTAssertEqual(try Scenario.load(json: JSONWriter.compact(.object(object))).compatibility.clientSecretClock.rawValue, value)
        }
        XCTAssertTrue(Scenario.default.prettyJSON.contains(#""client_secret_clock": "mock""#), Scenario.default.prettyJSON)
    }
}

@testable import AppleIDMock
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// Issue 18 point 6: `compatibility.client_secret_clock` for a backend that mints its
/// client_secret from real time while a suite moves the mock clock far ahead.
final class ClientSecretClockTests: XCTestCase {
    /// Real time, fixed so the reason lines are exact: 2027-01-15T08:00:00Z.
    private let real: Int64 = 1_800_000_000
    private let fourHundredDays = 400 * 86400.0

    private func start(_ clock: Compatibility.ClientSecretClock?, log: LogCapture) throws -> AppleIDMockServer {
        try startMock { [real] configuration in
            configuration.realTime = { Double(real) }
            configuration.log = log.sink
            if let clock { configuration.scenario.compatibility.clientSecretClock = clock }
        }
    }

    /// client_credentials with a secret the backend minted from real time.
    private func post(_ server: AppleIDMockServer, issuedAt: Int64) throws -> RawHTTPResponse {
        try server.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try server.secret(issuedAt: issuedAt)),
                                            ("grant_type", "client_credentials"), ("scope", "user.migration")])
    }

    func testClientSecretClock_DefaultMock_RefusesARealTimeSecretAfterABigAdvance_WithAHint() throws {
        let log = LogCapture()
        let server = try start(nil, log: log)
        defer { server.stop() }
        XCTAssertEqual(try post(server, issuedAt: real).status, 200)
        try server.advanceClock(by: fourHundredDays)
        assertAppleError(try post(server, issuedAt: real), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(log.take(), [
            "refused POST /auth/token: invalid_client — client_secret expired at mock time 2028-02-19T08:00:00Z (exp 2027-01-15T09:00:00Z)"
                + " (mock clock is 400 days ahead of real time; mint the secret from GET /__mock/clock,"
                + " or set compatibility.client_secret_clock to \"real\")",
        ])
        // The twin minted from the mock clock, as the hint says.
        XCTAssertEqual(try post(server, issuedAt: server.now).status, 200)
        XCTAssertEqual(log.take(), [])
    }

    func testClientSecretClock_Real_AcceptsARealTimeSecretAfterABigAdvance() throws {
        let log = LogCapture()
        let server = try start(.real, log: log)
        defer { server.stop() }
        try server.advanceClock(by: fourHundredDays)
        XCTAssertEqual(try post(server, issuedAt: real).status, 200)
        XCTAssertEqual(log.take(), [])
    }

    func testClientSecretClock_Real_StillRefusesAnExpiredSecret() throws {
        let log = LogCapture()
        let server = try start(.real, log: log)
        defer { server.stop() }
        try server.advanceClock(by: fourHundredDays)
        assertAppleError(try post(server, issuedAt: real - 7200), #"{"error":"invalid_client"}"#)
        assertAppleError(try post(server, issuedAt: real + 60), #"{"error":"invalid_client"}"#)
        XCTAssertEqual(log.take(), [
            "refused POST /auth/token: invalid_client — client_secret expired at real time 2027-01-15T08:00:00Z (exp 2027-01-15T07:00:00Z)",
            "refused POST /auth/token: invalid_client — client_secret iat 2027-01-15T08:01:00Z is in the future at real time 2027-01-15T08:00:00Z",
        ])
    }

    func testClientSecretClock_BadValue_IsAScenarioErrorNamingThePathAndTheChoices() throws {
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

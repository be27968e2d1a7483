import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import XCTest

/// `GET` and `POST /__mock/clock` in memory, and every lifetime following the clock, with exact status codes
/// and bodies. Every accepted input has a refused twin.
final class ClockRouteTests: XCTestCase {
    func testClockRoute_ShowsEpochFrozenNowAndOffset_AndARunningClockFollowsRealTime() async throws {
        let (frozen, frozenTime) = try startClockedMock()
        assertControl(try await frozen.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#)
        frozenTime.advance(by: 10)
        assertControl(try await frozen.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000010}"#)

        let (running, runningTime) = try startClockedMock(frozen: false)
        assertControl(try await running.get("/__mock/clock"), 200, #"{"epoch":1700000000,"frozen":false,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#)
        runningTime.advance(by: 10)
        assertControl(try await running.get("/__mock/clock"), 200, #"{"epoch":1700000010,"frozen":false,"now":"2023-11-14T22:13:30Z","offset":-50000000}"#)
    }

    // MARK: - POST /__mock/clock

    func testClockRoute_AdvancesSetsFreezesAndUnfreezes() async throws {
        let (mock, realTime) = try startClockedMock()
        assertControl(try await moveClock(mock, #"{"advance":301}"#), 200, clockBody(1_700_000_301, frozen: true, offset: -49_999_699))
        assertControl(try await moveClock(mock, #"{"advance":-1}"#), 200, clockBody(1_700_000_300, frozen: true, offset: -49_999_700))
        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z"}"#), 200, clockBody(1_893_456_000, frozen: true, offset: 143_456_000))
        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T01:00:00+01:00"}"#), 200, clockBody(1_893_456_000, frozen: true, offset: 143_456_000))
        assertControl(try await moveClock(mock, #"{"freeze":false}"#), 200, clockBody(1_893_456_000, frozen: false, offset: 143_456_000))
        realTime.advance(by: 5)
        assertControl(try await mock.get("/__mock/clock"), 200, clockBody(1_893_456_005, frozen: false, offset: 143_456_000))
        assertControl(try await moveClock(mock, #"{"freeze":true}"#), 200, clockBody(1_893_456_005, frozen: true, offset: 143_456_000))
        realTime.advance(by: 5)
        assertControl(try await mock.get("/__mock/clock"), 200, clockBody(1_893_456_005, frozen: true, offset: 143_455_995))
    }

    func testClockRoute_SetWithFreeze_StopsExactlyThere_WhileSetAloneKeepsRunning() async throws {
        let (mock, realTime) = try startClockedMock(frozen: false)
        realTime.advance(by: 7)
        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z"}"#), 200, clockBody(1_893_456_000, frozen: false, offset: 143_455_993))
        realTime.advance(by: 100)
        let fetched = try jsonObject(try await mock.get("/__mock/clock").body)["epoch"]
        XCTAssertEqual(fetched, .int(1_893_456_100))

        assertControl(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z","freeze":true}"#), 200,
                      clockBody(1_893_456_000, frozen: true, offset: 143_455_893))
        realTime.advance(by: 100)
        let epoch = try jsonObject(try await mock.get("/__mock/clock").body)["epoch"]
        XCTAssertEqual(epoch, .int(1_893_456_000))
    }

    func testClockRoute_RefusesBadInput_NamingTheField_AndLeavesTheClockAlone() async throws {
        let (mock, _) = try startClockedMock()
        let refusals: [(String, String)] = [
            (#"{"advance":"x"}"#, #"{"error":"expected a number of seconds","field":"advance"}"#),
            (#"{"advance":true}"#, #"{"error":"expected a number of seconds","field":"advance"}"#),
            (#"{"advance":1e10}"#, #"{"error":"expected a number of seconds within a century","field":"advance"}"#),
            (#"{"set":"tomorrow"}"#, #"{"error":"expected an RFC 3339 time such as 2030-01-01T00:00:00Z","field":"set"}"#),
            (#"{"set":"2030-02-30T00:00:00Z"}"#, #"{"error":"expected an RFC 3339 time such as 2030-01-01T00:00:00Z","field":"set"}"#),
            (#"{"set":1893456000}"#, #"{"error":"expected a string","field":"set"}"#),
            (#"{"set":"2200-01-01T00:00:00Z"}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"advance":-1700000001}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"advance"}"#),
            // Before the epoch by a minute: the field at fault is set (probe N14), also beside a fine advance.
            (#"{"set":"1970-01-01T00:00:00+00:01"}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"set":"1970-01-01T00:00:00+00:01","advance":120}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"set":"1970-01-01T00:01:00Z","advance":-120}"#, #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"advance"}"#),
            (#"{"freeze":"yes"}"#, #"{"error":"expected true or false","field":"freeze"}"#),
            (#"{}"#, #"{"error":"expected one of advance, set, freeze","field":null}"#),
            (#"{"speed":2}"#, #"{"error":"unknown field (expected one of: advance, set, freeze)","field":"speed"}"#),
            (#"{"#, #"{"error":"body is not valid JSON","field":null}"#),
            (#"[1]"#, #"{"error":"body must be a JSON object","field":null}"#),
        ]
        let untouched = #"{"epoch":1700000000,"frozen":true,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#
        for (body, answer) in refusals {
            assertControl(try await moveClock(mock, body), 400, answer)
            assertControl(try await mock.get("/__mock/clock"), 200, untouched)
        }
        // Twins: the last representable instant is accepted, and so is a fractional advance.
        assertControl(try await moveClock(mock, #"{"set":"2105-02-06T06:28:15Z"}"#), 200, clockBody(4_263_344_895, frozen: true, offset: 2_513_344_895))
        assertControl(try await moveClock(mock, #"{"advance":-0.5}"#), 200, clockBody(4_263_344_894, frozen: true, offset: 2_513_344_895))
    }

    func testClockRoute_RefusedMove_ChangesNothing_WhenOnlyALaterPartIsOutOfRange() async throws {
        let untouched = #"{"epoch":1700000000,"frozen":false,"now":"2023-11-14T22:13:20Z","offset":-50000000}"#
        // `freeze` is applied before `set`, and `set` before `advance`: a 400 must not leave the
        // earlier part applied.
        let cases: [(String, String)] = [
            (#"{"set":"2200-01-01T00:00:00Z","freeze":true}"#,
             #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"set"}"#),
            (#"{"set":"2105-01-01T00:00:00Z","advance":8640000}"#,
             #"{"error":"the clock stays within 1970-01-01T00:00:00Z and 2105-02-06T06:28:15Z","field":"advance"}"#),
        ]
        for (body, answer) in cases {
            let (mock, _) = try startClockedMock(frozen: false)
            assertControl(try await moveClock(mock, body), 400, answer)
            assertControl(try await mock.get("/__mock/clock"), 200, untouched, "after \(body)")
        }
        // Twin: the same parts within range are applied together.
        let (mock, _) = try startClockedMock(frozen: false)
        assertControl(try await moveClock(mock, #"{"set":"2105-01-01T00:00:00Z","advance":86400,"freeze":true}"#), 200,
                      clockBody(4_260_297_600, frozen: true, offset: 2_510_297_600))
    }

    // MARK: - Done when: every lifetime follows the clock

    func testClockRoute_CodeRedeemed301SecondsAfterIssue_IsExpired_WhileItsTwinAt299Works() async throws {
        let mock = try frozenClient()
        let twin = try await mock.webCode()
        let late = try await mock.webCode(user: "bob")
        assertStatus(try await moveClock(mock, #"{"advance":299}"#), 200)
        try assertTokenAnswer(try await mock.redeem(twin), keys: ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
        assertStatus(try await moveClock(mock, #"{"advance":2}"#), 200)
        let now = try await mock.now()
        XCTAssertEqual(now, frozenNow + 301)
        assertAppleError(try await mock.redeem(late), ControlFixture.expiredCode)
    }

    func testClockRoute_IDTokenMintedAfterSet2030_CarriesThatIssuedAt() async throws {
        let mock = try frozenClient()
        let before = try await mock.verifiedClaims(try await mintIDToken(mock))
        XCTAssertEqual(before["iat"], .int(frozenNow))
        let moved = try jsonObject(try await moveClock(mock, #"{"set":"2030-01-01T00:00:00Z"}"#).body)
        XCTAssertEqual(moved["now"], "2030-01-01T00:00:00Z")
        XCTAssertEqual(moved["epoch"], .int(1_893_456_000))
        let claims = try await mock.verifiedClaims(try await mintIDToken(mock))
        XCTAssertEqual(claims["iat"], .int(1_893_456_000))
        XCTAssertEqual(claims["exp"], .int(1_893_456_000 + 86_400))
        XCTAssertEqual(claims["auth_time"], .int(1_893_456_000))
    }

    func testClockRoute_ClientSecretExpiredInMockTime_IsRefused_WhileItsTwinAt599SecondsWorks() async throws {
        let mock = try frozenClient()
        let secret = try await mock.secret("com.example.app", lifetime: 600)
        func clientCredentials() async throws -> MockAnswer {
            try await mock.postForm("/auth/token", [("client_id", "com.example.app"), ("client_secret", secret),
                                                ("grant_type", "client_credentials"), ("scope", "user.migration")])
        }
        assertStatus(try await moveClock(mock, #"{"advance":599}"#), 200)
        try assertTokenAnswer(try await clientCredentials(), keys: ["access_token", "token_type", "expires_in"])
        assertStatus(try await moveClock(mock, #"{"advance":2}"#), 200)
        assertAppleError(try await clientCredentials(), #"{"error":"invalid_client"}"#)
    }
}

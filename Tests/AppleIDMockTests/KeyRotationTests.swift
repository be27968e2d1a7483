import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// The scenario's `signing_keys.rotation` (docs/apple-behaviour.md §1.5 [O]) run on the mock clock:
/// the clock is moved through `POST /__mock/clock` to either side of each boundary, and the keys
/// are read back through `GET /__mock/keys`, `GET /auth/keys`, `GET /__mock/health` and the
/// `kid` of freshly minted id_tokens.
final class KeyRotationTests: XCTestCase {
    private static let day: Int64 = 86_400
    private static let monthly = Scenario.SigningKeys.Rotation(every: 30 * 86_400, publishAhead: 7 * 86_400, retireAfter: 14 * 86_400)
    private static let initialKeys = ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"]

    /// One key as `GET /__mock/keys` lists it.
    private struct Listed: Equatable {
        var kid: String
        var state: String
        var publishedAt: String?
        var activatedAt: String?
        var retiredAt: String?
    }

    // MARK: - Factories

    /// A mock frozen at `frozenNow` running `rotation`.
    private func startRotatingMock(_ rotation: Scenario.SigningKeys.Rotation = monthly) throws -> any MockClient {
        try frozenClient { $0.scenario.signingKeys.rotation = rotation }
    }

    /// Moves the clock through the control API to `frozenNow + offset`.
    private func moveTo(_ mock: any MockClient, _ offset: Int64, file: StaticString = #filePath, line: UInt = #line) async throws {
        let now = try await mock.now(file: file, line: line)
        let response = try await mock.postJSON("/__mock/clock", #"{"advance":\#(frozenNow + offset - now)}"#)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        XCTAssertEqual(try jsonObject(response.body, file: file, line: line)["epoch"], .int(frozenNow + offset), file: file, line: line)
    }

    /// Every key `GET /__mock/keys` lists, in publication order.
    private func listed(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> [Listed] {
        let response = try await mock.get("/__mock/keys")
        XCTAssertEqual(response.status, 200, file: file, line: line)
        let keys = try XCTUnwrap(try jsonObject(response.body, file: file, line: line)["keys"]?.arrayValue, file: file, line: line)
        return keys.compactMap(\.objectValue).map { key in
            Listed(kid: key["kid"]?.stringValue ?? "", state: key["state"]?.stringValue ?? "", publishedAt: key["published_at"]?.stringValue,
                   activatedAt: key["activated_at"]?.stringValue, retiredAt: key["retired_at"]?.stringValue)
        }
    }

    /// The kids `/auth/keys` publishes, sorted.
    private func published(_ mock: any MockClient) async throws -> [String] {
        try JWKSet(json: try JSONParser.parse(try await mock.get("/auth/keys").body)).keys.map(\.kid).sorted()
    }

    /// `active_kid` of `GET /__mock/health`.
    private func healthKid(_ mock: any MockClient) async throws -> String? {
        try jsonObject(try await mock.get("/__mock/health").body)["active_kid"]?.stringValue
    }

    /// The `kid` of a freshly minted id_token.
    private func signingKid(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> String? {
        let response = try await mock.postJSON("/__mock/id-token", #"{"user":"alice"}"#)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try CompactJWS.parse(try XCTUnwrap(try jsonObject(response.body)["id_token"]?.stringValue, file: file, line: line)).keyID
    }

    /// Mock time `frozenNow + offset` as the control API writes it.
    private func at(_ offset: Int64) -> String { RFC3339.format(frozenNow + offset) }

    /// An event of `GET /__mock/events`: its type, and for a key event the kid and key time.
    private struct Event: Equatable {
        var type: String
        var kid: String?
        var at: Int64?
    }

    /// The events recorded after `sequence` but the clock's own (`GET /__mock/events?after=`).
    private func events(_ mock: any MockClient, after sequence: Int64, file: StaticString = #filePath, line: UInt = #line) async throws -> [Event] {
        let response = try await mock.get("/__mock/events?after=\(sequence)")
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        let events = try jsonObject(response.body, file: file, line: line)["events"]?.arrayValue ?? []
        return events.compactMap(\.objectValue).map { event in
            Event(type: event["type"]?.stringValue ?? "", kid: event["kid"]?.stringValue, at: event["key_time"]?.intValue)
        }.filter { !["clock-changed", "key-schedule-advanced"].contains($0.type) }
    }

    /// The sequence number of the newest recorded event: the feed's `last`, read page by page.
    private func lastSequence(_ mock: any MockClient, file: StaticString = #filePath, line: UInt = #line) async throws -> Int64 {
        var last: Int64 = 0
        while true {
            let response = try await mock.get("/__mock/events?after=\(last)")
            XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
            let page = try XCTUnwrap(try jsonObject(response.body, file: file, line: line)["last"]?.intValue, file: file, line: line)
            if page == last { return last }
            last = page
        }
    }

    // MARK: - The pattern, boundary by boundary

    func testRotation_PublishesAhead_ActivatesAtEvery_RetiresAfter() async throws {
        let mock = try startRotatingMock()
        let day = Self.day
        // At start: the scenario's three keys, W2ek7HdPaL signing.
        var publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, Self.initialKeys.sorted())
        var activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, "W2ek7HdPaL")
        let posted = try await mock.postJSON("/__mock/id-token", #"{"user":"alice"}"#)
        let startToken = try XCTUnwrap(try jsonObject(posted.body)["id_token"]?.stringValue)

        // every − publish_ahead: a fourth key appears, not signing.
        try await moveTo(mock, 23 * day - 1)
        let listedCount = try await listed(mock).count
        XCTAssertEqual(listedCount, 3)
        publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, Self.initialKeys.sorted())
        var sequence = try await lastSequence(mock)
        try await moveTo(mock, 23 * day)
        let keys = try await listed(mock)
        XCTAssertEqual(keys.count, 4)
        let next = try XCTUnwrap(keys.last).kid
        XCTAssertTrue(matches(next, "^[A-Za-z0-9]{10}$"), next)
        XCTAssertEqual(keys.last, Listed(kid: next, state: "published", publishedAt: at(23 * day), activatedAt: nil, retiredAt: nil))
        let published23 = try await events(mock, after: sequence)
        XCTAssertEqual(published23.map(\.type), ["key-published"])
        publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, (Self.initialKeys + [next]).sorted())
        activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, "W2ek7HdPaL")
        var signer = try await signingKid(mock)
        XCTAssertEqual(signer, "W2ek7HdPaL")

        // every: it signs; the old keys stay published.
        try await moveTo(mock, 30 * day - 1)
        activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, "W2ek7HdPaL")
        signer = try await signingKid(mock)
        XCTAssertEqual(signer, "W2ek7HdPaL")
        sequence = try await lastSequence(mock)
        try await moveTo(mock, 30 * day)
        let activated30 = try await events(mock, after: sequence)
        XCTAssertEqual(activated30, [Event(type: "key-activated", kid: next, at: frozenNow + 30 * day)])
        activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, next)
        signer = try await signingKid(mock)
        XCTAssertEqual(signer, next)
        publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, (Self.initialKeys + [next]).sorted())
        let listedKeys = try await listed(mock)
        XCTAssertEqual(listedKeys, [
            Listed(kid: "W2ek7HdPaL", state: "published", publishedAt: at(0), activatedAt: at(0), retiredAt: nil),
            Listed(kid: "Ymq4vB9xTz", state: "published", publishedAt: at(0), activatedAt: nil, retiredAt: nil),
            Listed(kid: "r8TcNf3QsJ", state: "published", publishedAt: at(0), activatedAt: nil, retiredAt: nil),
            Listed(kid: next, state: "active", publishedAt: at(23 * day), activatedAt: at(30 * day), retiredAt: nil),
        ])
        let stillPublished = try await published(mock)
        XCTAssertTrue(stillPublished.contains("W2ek7HdPaL"), "a token signed at start still verifies")

        // every + retire_after: the previous signer and the other initial keys leave /auth/keys.
        try await moveTo(mock, 44 * day - 1)
        publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, (Self.initialKeys + [next]).sorted())
        sequence = try await lastSequence(mock)
        try await moveTo(mock, 44 * day)
        let retired44 = try await events(mock, after: sequence)
        XCTAssertEqual(Set(retired44.compactMap { $0.type == "key-retired" && $0.at == frozenNow + 44 * day ? $0.kid : nil }), Set(Self.initialKeys))
        XCTAssertEqual(retired44.count, 3)
        publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, [next])
        let firstStates = try await listed(mock).prefix(3).map(\.state)
        XCTAssertEqual(firstStates, ["retired", "retired", "retired"])
        let firstRetiredAt = try await listed(mock).prefix(3).map(\.retiredAt)
        XCTAssertEqual(firstRetiredAt, [at(44 * day), at(44 * day), at(44 * day)])
        activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, next)
        let startKid = try XCTUnwrap(try CompactJWS.parse(startToken).keyID)
        let afterRetirement = try await mock.publishedKeys()
        XCTAssertNil(afterRetirement.key(withID: startKid), "a token signed at start finds no key")

        // The next step repeats the pattern: published at 2·every − publish_ahead.
        try await moveTo(mock, 53 * day - 1)
        publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, [next])
        try await moveTo(mock, 53 * day)
        let publishedCount = try await published(mock).count
        XCTAssertEqual(publishedCount, 2)
        signer = try await signingKid(mock)
        XCTAssertEqual(signer, next)
    }

    func testRotation_YearJump_PublishesAtMostThePatternsKeysAtOnce() async throws {
        let mock = try startRotatingMock()
        XCTAssertEqual(Self.monthly.publishedAtOnce, 2)
        try await moveTo(mock, 365 * Self.day)
        // Steps 11 (signed days 330–360, retires day 374) and 12 (signs from day 360): two keys, not twelve.
        let keys = try await listed(mock)
        XCTAssertEqual(keys.count, 3 + 2)
        XCTAssertEqual(keys.prefix(3).map(\.state), ["retired", "retired", "retired"])
        XCTAssertEqual(keys.suffix(2).map(\.state), ["published", "active"])
        let publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, keys.suffix(2).map(\.kid).sorted())
        var publishedCount = try await published(mock).count
        XCTAssertLessThanOrEqual(publishedCount, Self.monthly.publishedAtOnce)
        let signer = try await signingKid(mock)
        XCTAssertEqual(signer, keys.last?.kid)
        // Another year: still bounded, the previous ones retired.
        try await moveTo(mock, 730 * Self.day)
        let later = try await listed(mock)
        XCTAssertEqual(later.count, 5 + 2)
        XCTAssertEqual(later.filter { $0.state != "retired" }.map(\.kid), later.suffix(2).map(\.kid))
        publishedCount = try await published(mock).count
        XCTAssertLessThanOrEqual(publishedCount, Self.monthly.publishedAtOnce)
    }

    func testRotation_YearJump_WithADailyPattern_PublishesOnlyTheLiveSteps() async throws {
        // Published a day ahead, kept three days: step k lives from day k−1 to day k+4.
        let daily = Scenario.SigningKeys.Rotation(every: 86_400, publishAhead: 86_400, retireAfter: 3 * 86_400)
        XCTAssertEqual(daily.publishedAtOnce, 6)
        let mock = try startRotatingMock(daily)
        try await moveTo(mock, 365 * Self.day)
        let keys = try await listed(mock)
        // Steps 362 … 366 are live on day 365; step 365 signs. Step 1 (published a day ahead, so
        // at the start) is there too when the once-a-second tick ran before the clock moved:
        // retired since, like the three starting keys.
        XCTAssertTrue((3 + 5)...(3 + 1 + 5) ~= keys.count, "\(keys)")
        XCTAssertEqual(keys.dropLast(5).map(\.state), Array(repeating: "retired", count: keys.count - 5))
        XCTAssertEqual(keys.suffix(5).map(\.state), ["published", "published", "published", "active", "published"])
        let kids = try await published(mock)
        XCTAssertEqual(kids.count, 5, "\(keys) \(kids)")
        let publishedCount = try await published(mock).count
        XCTAssertLessThanOrEqual(publishedCount, daily.publishedAtOnce)
        let activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, keys[keys.count - 2].kid)
    }

    func testRotation_MovingTheClockBack_DoesNotUndoARotation() async throws {
        let mock = try startRotatingMock()
        try await moveTo(mock, 30 * Self.day)
        let healthKidAnswer = try await healthKid(mock)
        let signer = try XCTUnwrap(healthKidAnswer)
        XCTAssertNotEqual(signer, "W2ek7HdPaL")
        try await moveTo(mock, 0)
        var activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, signer)
        var publishedCount = try await published(mock).count
        XCTAssertEqual(publishedCount, 4)
        let listedCount = try await listed(mock).count
        XCTAssertEqual(listedCount, 4)
        // A reset, by contrast, starts the pattern over.
        assertStatus(try await mock.postJSON("/__mock/reset", ""), 200)
        activeKid = try await healthKid(mock)
        XCTAssertEqual(activeKid, "W2ek7HdPaL")
        let publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, Self.initialKeys.sorted())
        try await moveTo(mock, 23 * Self.day)
        publishedCount = try await published(mock).count
        XCTAssertEqual(publishedCount, 4)
    }

    func testRotation_WithoutAPattern_MovingTheClockChangesNoKeys() async throws {
        let mock = try frozenClient()
        try await moveTo(mock, 365 * Self.day)
        let states = try await listed(mock).map(\.state)
        XCTAssertEqual(states, ["active", "published", "published"])
        let publishedKids = try await published(mock)
        XCTAssertEqual(publishedKids, Self.initialKeys.sorted())
    }

    // MARK: - Scenario rules

    /// The built-in scenario with `rotation`, loaded from JSON.
    private func load(_ rotation: Scenario.SigningKeys.Rotation) throws -> Scenario {
        var scenario = Scenario.default
        scenario.signingKeys.rotation = rotation
        return try Scenario.load(json: Array(scenario.prettyJSON.utf8))
    }

    func testScenario_RefusesABadRotationPattern_NamingTheKey() async throws {
        let fast = try XCTUnwrap(assertThrows(try load(.init(every: 59, publishAhead: 0, retireAfter: 0))) as? ScenarioError)
        XCTAssertEqual(fast.problems, [.init(path: "signing_keys.rotation.every", message: "expected an integer from 60 to 316224000, found 59")])
        let ahead = try XCTUnwrap(assertThrows(try load(.init(every: 86_400, publishAhead: 86_401, retireAfter: 0))) as? ScenarioError)
        XCTAssertEqual(ahead.problems, [.init(path: "signing_keys.rotation.publish_ahead", message: "expected at most every (86400)")])
        let crowded = try XCTUnwrap(assertThrows(try load(.init(every: 60, publishAhead: 60, retireAfter: 600))) as? ScenarioError)
        XCTAssertEqual(crowded.problems.map(\.path), ["signing_keys.rotation"])
        // A Swift-built scenario meets the same rules at start.
        guard case .scenario(let error)? = assertThrows(try startMock { $0.scenario.signingKeys.rotation = .init(every: 59, publishAhead: 0, retireAfter: 0) })
            as? AppleIDMockError else { return XCTFail("expected a scenario error") }
        XCTAssertEqual(error.problems.map(\.path), ["signing_keys.rotation.every"])
        // Twins: the boundary values load.
        XCTAssertEqual(try load(.init(every: 60, publishAhead: 60, retireAfter: 0)).signingKeys.rotation, .init(every: 60, publishAhead: 60, retireAfter: 0))
        XCTAssertEqual(try load(Self.monthly).signingKeys.rotation, Self.monthly)
    }
}

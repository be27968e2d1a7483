import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// The scenario's `signing_keys.rotation` (apple-reference.md §1.5 [O]) run on the mock clock:
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
    private func startRotatingMock(_ rotation: Scenario.SigningKeys.Rotation = monthly) throws -> AppleIDMockServer {
        try startFrozenMock { $0.scenario.signingKeys.rotation = rotation }
    }

    /// Moves the clock through the control API to `frozenNow + offset`.
    private func moveTo(_ server: AppleIDMockServer, _ offset: Int64, file: StaticString = #filePath, line: UInt = #line) throws {
        let response = try server.postJSON("/__mock/clock", #"{"advance":\#(frozenNow + offset - server.now)}"#)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        XCTAssertEqual(try jsonObject(response.body, file: file, line: line)["epoch"], .int(frozenNow + offset), file: file, line: line)
    }

    /// Every key `GET /__mock/keys` lists, in publication order.
    private func listed(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> [Listed] {
        let response = try server.get("/__mock/keys")
        XCTAssertEqual(response.status, 200, file: file, line: line)
        let keys = try XCTUnwrap(try jsonObject(response.body, file: file, line: line)["keys"]?.arrayValue, file: file, line: line)
        return keys.compactMap(\.objectValue).map { key in
            Listed(kid: key["kid"]?.stringValue ?? "", state: key["state"]?.stringValue ?? "", publishedAt: key["published_at"]?.stringValue,
                   activatedAt: key["activated_at"]?.stringValue, retiredAt: key["retired_at"]?.stringValue)
        }
    }

    /// The kids `/auth/keys` publishes, sorted.
    private func published(_ server: AppleIDMockServer) throws -> [String] {
        try JWKSet(json: try JSONParser.parse(try server.get("/auth/keys").body)).keys.map(\.kid).sorted()
    }

    /// `active_kid` of `GET /__mock/health`.
    private func healthKid(_ server: AppleIDMockServer) throws -> String? {
        try jsonObject(try server.get("/__mock/health").body)["active_kid"]?.stringValue
    }

    /// The `kid` of a freshly minted id_token.
    private func signingKid(_ server: AppleIDMockServer, file: StaticString = #filePath, line: UInt = #line) throws -> String? {
        let response = try server.postJSON("/__mock/id-token", #"{"user":"alice"}"#)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try CompactJWS.parse(try XCTUnwrap(try jsonObject(response.body)["id_token"]?.stringValue, file: file, line: line)).keyID
    }

    /// Mock time `frozenNow + offset` as the control API writes it.
    private func at(_ offset: Int64) -> String { RFC3339.format(frozenNow + offset) }

    /// The events recorded after `sequence`.
    private func events(_ server: AppleIDMockServer, after sequence: UInt64) -> [DomainEvent] {
        server.domain.state.events(after: sequence).events.map(\.event).filter {
            switch $0 {
            case .clockChanged, .keyScheduleAdvanced: false
            default: true
            }
        }
    }

    /// The sequence number of the newest recorded event.
    private func lastSequence(_ server: AppleIDMockServer) -> UInt64 {
        server.domain.state.lastEventSequence
    }

    // MARK: - The pattern, boundary by boundary

    func testRotation_PublishesAhead_ActivatesAtEvery_RetiresAfter() throws {
        let server = try startRotatingMock()
        defer { server.stop() }
        let day = Self.day
        // At start: the scenario's three keys, W2ek7HdPaL signing.
        XCTAssertEqual(try published(server), Self.initialKeys.sorted())
        XCTAssertEqual(try healthKid(server), "W2ek7HdPaL")
        let startToken = try XCTUnwrap(try jsonObject(try server.postJSON("/__mock/id-token", #"{"user":"alice"}"#).body)["id_token"]?.stringValue)

        // every − publish_ahead: a fourth key appears, not signing.
        try moveTo(server, 23 * day - 1)
        XCTAssertEqual(try listed(server).count, 3)
        XCTAssertEqual(try published(server), Self.initialKeys.sorted())
        var sequence = lastSequence(server)
        try moveTo(server, 23 * day)
        let keys = try listed(server)
        XCTAssertEqual(keys.count, 4)
        let next = try XCTUnwrap(keys.last).kid
        XCTAssertTrue(matches(next, "^[A-Za-z0-9]{10}$"), next)
        XCTAssertEqual(keys.last, Listed(kid: next, state: "published", publishedAt: at(23 * day), activatedAt: nil, retiredAt: nil))
        XCTAssertEqual(events(server, after: sequence).map(\.name), ["key-published"])
        XCTAssertEqual(try published(server), (Self.initialKeys + [next]).sorted())
        XCTAssertEqual(try healthKid(server), "W2ek7HdPaL")
        XCTAssertEqual(try signingKid(server), "W2ek7HdPaL")

        // every: it signs; the old keys stay published.
        try moveTo(server, 30 * day - 1)
        XCTAssertEqual(try healthKid(server), "W2ek7HdPaL")
        XCTAssertEqual(try signingKid(server), "W2ek7HdPaL")
        sequence = lastSequence(server)
        try moveTo(server, 30 * day)
        XCTAssertEqual(events(server, after: sequence), [.keyActivated(kid: next, at: frozenNow + 30 * day)])
        XCTAssertEqual(try healthKid(server), next)
        XCTAssertEqual(try signingKid(server), next)
        XCTAssertEqual(try published(server), (Self.initialKeys + [next]).sorted())
        XCTAssertEqual(try listed(server), [
            Listed(kid: "W2ek7HdPaL", state: "published", publishedAt: at(0), activatedAt: at(0), retiredAt: nil),
            Listed(kid: "Ymq4vB9xTz", state: "published", publishedAt: at(0), activatedAt: nil, retiredAt: nil),
            Listed(kid: "r8TcNf3QsJ", state: "published", publishedAt: at(0), activatedAt: nil, retiredAt: nil),
            Listed(kid: next, state: "active", publishedAt: at(23 * day), activatedAt: at(30 * day), retiredAt: nil),
        ])
        XCTAssertNotNil(server.domain.state.publicKey(keyID: "W2ek7HdPaL"), "a token signed at start still verifies")

        // every + retire_after: the previous signer and the other initial keys leave /auth/keys.
        try moveTo(server, 44 * day - 1)
        XCTAssertEqual(try published(server), (Self.initialKeys + [next]).sorted())
        sequence = lastSequence(server)
        try moveTo(server, 44 * day)
        XCTAssertEqual(Set(events(server, after: sequence).compactMap { if case .keyRetired(let kid, frozenNow + 44 * day, _) = $0 { kid } else { nil } }),
                       Set(Self.initialKeys))
        XCTAssertEqual(events(server, after: sequence).count, 3)
        XCTAssertEqual(try published(server), [next])
        XCTAssertEqual(try listed(server).prefix(3).map(\.state), ["retired", "retired", "retired"])
        XCTAssertEqual(try listed(server).prefix(3).map(\.retiredAt), [at(44 * day), at(44 * day), at(44 * day)])
        XCTAssertEqual(try healthKid(server), next)
        XCTAssertNil(server.domain.state.publicKey(keyID: try XCTUnwrap(try CompactJWS.parse(startToken).keyID)))

        // The next step repeats the pattern: published at 2·every − publish_ahead.
        try moveTo(server, 53 * day - 1)
        XCTAssertEqual(try published(server), [next])
        try moveTo(server, 53 * day)
        XCTAssertEqual(try published(server).count, 2)
        XCTAssertEqual(try signingKid(server), next)
    }

    func testRotation_YearJump_PublishesAtMostThePatternsKeysAtOnce() throws {
        let server = try startRotatingMock()
        defer { server.stop() }
        XCTAssertEqual(Self.monthly.publishedAtOnce, 2)
        try moveTo(server, 365 * Self.day)
        // Steps 11 (signed days 330–360, retires day 374) and 12 (signs from day 360): two keys, not twelve.
        let keys = try listed(server)
        XCTAssertEqual(keys.count, 3 + 2)
        XCTAssertEqual(keys.prefix(3).map(\.state), ["retired", "retired", "retired"])
        XCTAssertEqual(keys.suffix(2).map(\.state), ["published", "active"])
        XCTAssertEqual(try published(server), keys.suffix(2).map(\.kid).sorted())
        XCTAssertLessThanOrEqual(try published(server).count, Self.monthly.publishedAtOnce)
        XCTAssertEqual(try signingKid(server), keys.last?.kid)
        // Another year: still bounded, the previous ones retired.
        try moveTo(server, 730 * Self.day)
        let later = try listed(server)
        XCTAssertEqual(later.count, 5 + 2)
        XCTAssertEqual(later.filter { $0.state != "retired" }.map(\.kid), later.suffix(2).map(\.kid))
        XCTAssertLessThanOrEqual(try published(server).count, Self.monthly.publishedAtOnce)
    }

    func testRotation_YearJump_WithADailyPattern_PublishesOnlyTheLiveSteps() throws {
        // Published a day ahead, kept three days: step k lives from day k−1 to day k+4.
        let daily = Scenario.SigningKeys.Rotation(every: 86_400, publishAhead: 86_400, retireAfter: 3 * 86_400)
        XCTAssertEqual(daily.publishedAtOnce, 6)
        let server = try startRotatingMock(daily)
        defer { server.stop() }
        try moveTo(server, 365 * Self.day)
        let keys = try listed(server)
        // Steps 362 … 366 are live on day 365; step 365 signs. Step 1 (published a day ahead, so
        // at the start) is there too when the once-a-second tick ran before the clock moved:
        // retired since, like the three starting keys.
        XCTAssertTrue((3 + 5)...(3 + 1 + 5) ~= keys.count, "\(keys)")
        XCTAssertEqual(keys.dropLast(5).map(\.state), Array(repeating: "retired", count: keys.count - 5))
        XCTAssertEqual(keys.suffix(5).map(\.state), ["published", "published", "published", "active", "published"])
        let kids = try published(server)
        XCTAssertEqual(kids.count, 5, "\(keys) \(kids)")
        XCTAssertLessThanOrEqual(try published(server).count, daily.publishedAtOnce)
        XCTAssertEqual(try healthKid(server), keys[keys.count - 2].kid)
    }

    func testRotation_MovingTheClockBack_DoesNotUndoARotation() throws {
        let server = try startRotatingMock()
        defer { server.stop() }
        try moveTo(server, 30 * Self.day)
        let signer = try XCTUnwrap(try healthKid(server))
        XCTAssertNotEqual(signer, "W2ek7HdPaL")
        try moveTo(server, 0)
        XCTAssertEqual(try healthKid(server), signer)
        XCTAssertEqual(try published(server).count, 4)
        XCTAssertEqual(try listed(server).count, 4)
        // A reset, by contrast, starts the pattern over.
        XCTAssertEqual(try server.postJSON("/__mock/reset", "").status, 200)
        XCTAssertEqual(try healthKid(server), "W2ek7HdPaL")
        XCTAssertEqual(try published(server), Self.initialKeys.sorted())
        try moveTo(server, 23 * Self.day)
        XCTAssertEqual(try published(server).count, 4)
    }

    func testRotation_WithoutAPattern_MovingTheClockChangesNoKeys() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        try moveTo(server, 365 * Self.day)
        XCTAssertEqual(try listed(server).map(\.state), ["active", "published", "published"])
        XCTAssertEqual(try published(server), Self.initialKeys.sorted())
    }

    // MARK: - Scenario rules

    /// The built-in scenario with `rotation`, loaded from JSON.
    private func load(_ rotation: Scenario.SigningKeys.Rotation) throws -> Scenario {
        var scenario = Scenario.default
        scenario.signingKeys.rotation = rotation
        return try Scenario.load(json: Array(scenario.prettyJSON.utf8))
    }

    func testScenario_RefusesABadRotationPattern_NamingTheKey() throws {
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

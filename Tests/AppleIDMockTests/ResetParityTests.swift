@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `POST /__mock/reset` and the Swift `reset()` are one operation (issue 36): after the same
/// prior operations, both leave the same state — world, keys, users, consents, clock and
/// faults (a runtime fault removed, the scenario's put back unfired).
final class ResetParityTests: XCTestCase {
    /// Everything a reset decides, as comparable values.
    private struct State: Equatable {
        var world: World.Snapshot
        var faults: [InstalledFault]
        var keys: [String]
        var signingKeyID: String?
        var users: [UserAccount]
        var consents: Int
        var clock: MockClock
        var jwks: [UInt8]
    }

    private func state(_ mock: InMemoryMock) -> State {
        let domain = mock.domain
        let keys = domain.keyRecords.map { "\($0.keyID) \($0.state) \($0.publishedAt) \($0.activatedAt ?? -1) \($0.retiredAt ?? -1)" }
        return State(world: domain.worldSnapshot, faults: domain.faults, keys: keys, signingKeyID: domain.signingKeyID,
                     users: domain.users, consents: domain.consentCount, clock: domain.clockState, jwks: domain.jwksBody())
    }

    /// A seeded, frozen mock in memory whose scenario installs a fault on `/auth/keys`.
    private func seededMock() throws -> InMemoryMock {
        let mock = try inMemoryMock { configuration in
            configuration.seed = 36
            configuration.scenario.clock = .init(start: frozenNow, frozen: true)
            configuration.scenario.faults = [try! FaultSpec(json: JSONParser.parse(#"{"path":"/auth/keys","action":"respond","status":429,"times":2}"#))]
        }
        addTeardownBlock { await mock.stop() }
        return mock
    }

    /// The same operations on either mock: sign-ins, a user, an account event, a key rotation,
    /// a clock move, the scenario's fault fired once and a runtime fault installed.
    private func drive(_ mock: InMemoryMock) async throws {
        let keysStatus = await mock.get("/auth/keys").status.code
        XCTAssertEqual(keysStatus, 429, "the scenario's fault fires")
        _ = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        _ = try await mock.signInWeb(user: "bob", clientID: "com.example.web", redirectURI: webRedirect)
        let addedStatus = await mock.postJSON("/__mock/users", #"{"id":"dora","email":"dora@example.com"}"#).status.code
        XCTAssertEqual(addedStatus, 201)
        _ = try await mock.signInNative(user: "dora", clientID: "com.example.app", hideEmail: true)
        try await mock.fireEvent(.emailDisabled, user: "dora", clientID: "com.example.app")
        try await mock.rotateKeys()
        try await mock.advanceClock(by: .seconds(3600))
        try await mock.installFault(try .http(.post, "/auth/token", .respond(status: 503)))
    }

    func testResetRouteAndSwiftReset_LeaveTheSameState_FaultsIncluded() async throws {
        let overHTTP = try seededMock()
        let inSwift = try seededMock()
        try await drive(overHTTP)
        try await drive(inSwift)
        let driven = state(inSwift)
        XCTAssertEqual(state(overHTTP), driven, "the same operations on the same seed make the same state")
        XCTAssertEqual(driven.faults.map(\.id), ["f1", "f2"])
        XCTAssertEqual(driven.faults.first?.fired, 1)

        let answer = await overHTTP.postJSON("/__mock/reset", "{}")
        XCTAssertEqual(answer.status.code, 200, answer.text)
        try await inSwift.reset()
        let reset = state(inSwift)
        XCTAssertEqual(state(overHTTP), reset)
        // What both came back to: the scenario's fault unfired and the runtime one gone, its
        // users, no consent, its keys and its clock.
        XCTAssertEqual(reset.faults.map(\.id), ["f1"])
        XCTAssertEqual(reset.faults.first?.fired, 0)
        XCTAssertEqual(reset.faults.first?.remaining, 2)
        XCTAssertEqual(reset.users.map(\.user.id), ["alice", "bob", "carol"])
        XCTAssertEqual(reset.consents, 0)
        XCTAssertEqual(reset.keys.map { String($0.prefix(10)) }, ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(reset.clock.seconds(real: 0), frozenNow)
        // The twin: the comparison sees a difference — the driven state is not the reset one.
        XCTAssertNotEqual(driven, reset)
        XCTAssertNotEqual(driven.world, reset.world)
        XCTAssertNotEqual(driven.faults, reset.faults)
    }

    func testResetRoute_ListsTheSameFaults_AsTheSwiftReset_OverTheControlAPI() async throws {
        let overHTTP = try seededMock()
        let inSwift = try seededMock()
        for mock in [overHTTP, inSwift] {
            try await mock.installFault(try .notifications(type: .consentRevoked, .drop))
            let removed = try await mock.removeFaults()
            XCTAssertEqual(removed, 2, "the scenario's fault and the runtime one")
        }
        let noneListed = await overHTTP.get("/__mock/faults").text
        XCTAssertEqual(noneListed, #"{"faults":[]}"#)
        let resetStatus = await overHTTP.postJSON("/__mock/reset", "{}").status.code
        XCTAssertEqual(resetStatus, 200)
        try await inSwift.reset()
        let listed = await overHTTP.get("/__mock/faults").text
        let listedBySwift = await inSwift.get("/__mock/faults").text
        XCTAssertEqual(listedBySwift, listed)
        XCTAssertEqual(try jsonObject(Array(listed.utf8))["faults"]?.arrayValue?.compactMap { $0.objectValue?["id"]?.stringValue }, ["f1"],
                       "both put the scenario's fault back")
    }
}

@testable import AppleIDMock
import Foundation
import JOSE
import Synchronization
import XCTest

/// One record of what happened (issue 20): events carry their whole effect and are the only way
/// a world changes, so a run replays; a refused operation changes nothing; and the races the
/// review found — a clock move seen without its rotation, mock time running backwards, a
/// deletion told to one app group only — are gone.
final class EventRecordTests: XCTestCase {
    private static let teamB = "MOCKTEAM02"
    private static let teamBApp = "com.teamb.app"

    /// A domain over the built-in scenario plus a second team, clock frozen at `frozenNow`, seeded.
    private func makeDomain(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> AppleIDDomain {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
        configuration.scenario.teams.append(Scenario.Team(
            teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY001", publicKeyPEM: try mockDeveloperKey.publicKey.pem)],
            clients: [Scenario.Client(clientID: Self.teamBApp, kind: .appID)], notificationURL: "http://127.0.0.1:9/team-b"))
        configuration.seed = 42
        configuration.log = { _ in }
        adjust(&configuration)
        return try AppleIDDomain(configuration: configuration)
    }

    private func secret(_ domain: AppleIDDomain, _ clientID: String, team: String = "MOCKTEAM01") throws -> String {
        try ClientSecret.make(teamID: team, keyID: "MOCKKEY001", clientID: clientID, privateKey: mockDeveloperKey, issuedAt: domain.now, lifetime: 3600)
    }

    private func approve(_ domain: AppleIDDomain, user: String) throws -> String {
        let request = try domain.validateAuthorize(["client_id": "com.example.web", "redirect_uri": webRedirect, "response_type": "code",
                                                    "response_mode": "form_post", "scope": "name email", "state": "s", "nonce": "n"])
        let delivery = try domain.approve(request, AppleIDDomain.Approval(userID: user))
        return try XCTUnwrap(delivery.parameters.first { $0.0 == "code" }?.1)
    }

    private func redeem(_ domain: AppleIDDomain, _ code: String) throws -> JSONObject {
        try domain.token(form: ["client_id": "com.example.web", "client_secret": try secret(domain, "com.example.web"), "grant_type": "authorization_code",
                          "code": code, "redirect_uri": webRedirect])
    }

    private func snapshot(_ domain: AppleIDDomain) -> World.Snapshot {
        domain.reading { world, _ in world.snapshot }
    }

    // MARK: - Replay

    func testReplay_TheEventsOfABusyRun_RebuildTheSameWorld() async throws {
        let busy: (inout AppleIDMockConfiguration) -> Void = {
            $0.scenario.signingKeys.rotation = .init(every: 30 * 86_400, publishAhead: 7 * 86_400, retireAfter: 49 * 86_400)
            $0.scenario.compatibility.refreshThrottle = RefreshThrottle(perDay: 5, error: "invalid_grant")
        }
        let domain = try makeDomain(busy)
        // Sign-ins, exchanges, a refresh (counted by the throttle), a revoke.
        let alice = try redeem(domain, try approve(domain, user: "alice"))
        _ = try domain.token(form: ["client_id": "com.example.web", "client_secret": try secret(domain, "com.example.web"), "grant_type": "refresh_token",
                              "refresh_token": try XCTUnwrap(alice["refresh_token"]?.stringValue)])
        let bob = try redeem(domain, try approve(domain, user: "bob"))
        try domain.revoke(form: ["client_id": "com.example.web", "client_secret": try secret(domain, "com.example.web"),
                           "token": try XCTUnwrap(bob["access_token"]?.stringValue)])
        _ = try approve(domain, user: "bob")
        _ = try domain.nativeSignIn(userID: "alice", clientID: Self.teamBApp, scopes: ["email"], nonce: nil, hideEmail: true)
        // Users, account events, keys, the clock (with the rotation pattern), a transfer, a reset, and more after it.
        _ = try domain.addUser(Scenario.User(id: "dora", email: "dora@example.com", givenName: "Dora", familyName: "Doe", hideEmail: true))
        _ = try domain.nativeSignIn(userID: "dora", clientID: "com.example.app", scopes: ["email"], nonce: nil, hideEmail: nil)
        try domain.accountEvent(.emailDisabled, user: "dora", clientID: "com.example.app")
        try domain.accountEvent(.emailEnabled, user: "dora", clientID: "com.example.app")
        _ = try domain.passwordChanged(user: "dora")
        _ = try await domain.publishKey(keyID: "Custom1", privateKey: nil)
        try domain.activateKey("Custom1")
        try domain.retireKey("r8TcNf3QsJ")
        _ = try await domain.rotateKeys()
        try await domain.advanceClock(by: 31 * 86_400)
        _ = try approve(domain, user: "alice")
        let bearer = try XCTUnwrap(try domain.token(form: ["client_id": "com.example.app", "client_secret": try secret(domain, "com.example.app"),
                                                     "grant_type": "client_credentials", "scope": "user.migration"])["access_token"]?.stringValue)
        _ = try domain.userMigrationInfo(form: ["sub": teamSub("alice"), "target": Self.teamB, "client_id": "com.example.app",
                                          "client_secret": try secret(domain, "com.example.app")], bearer: bearer)
        try domain.accountEvent(.accountDelete, user: "alice", clientID: "com.example.app")
        try await domain.advanceClock(by: 301)
        _ = try approve(domain, user: "bob")
        domain.reset()
        _ = try redeem(domain, try approve(domain, user: "alice"))
        try domain.accountEvent(.consentRevoked, user: "alice", clientID: "com.example.web")

        let (events, missed) = domain.events.events()
        XCTAssertEqual(missed, 0)
        XCTAssertEqual(events.first?.sequence, 1, "every event since start")
        let kinds = Set(events.map(\.event.name))
        // Every kind but those this run does not set out to make (a new kind fails here until it is
        // made above or named here).
        let notMade: Set<DomainEvent.Kind> = [.timelineEventRefused, .faultFired, .faultsInstalled, .faultsRemoved,
                                              .notificationAttempted, .notificationsCleared, .notificationImported]
        for kind in DomainEvent.Kind.allCases where !notMade.contains(kind) {
            XCTAssertTrue(kinds.contains(kind.rawValue), "the busy run recorded no \(kind.rawValue)")
        }
        // A fresh mock with the same scenario and seed, given the beginning and the events, is the same world.
        func replay(_ events: [RecordedEvent]) throws -> AppleIDDomain {
            var configuration = AppleIDMockConfiguration()
            configuration.keysDirectory = repositoryRoot + "/Keys/signing"
            configuration.log = { _ in }
            configuration.scenario = domain.scenario
            configuration.seed = 42
            return try AppleIDDomain(configuration: configuration, restored: StoredState(genesis: domain.owner.genesis, events: events))
        }
        let fresh = try makeDomain(busy)
        XCTAssertNotEqual(snapshot(fresh), snapshot(domain))
        let replayed = try replay(events)
        XCTAssertEqual(snapshot(replayed), snapshot(domain))
        XCTAssertEqual(replayed.jwksBody(shuffled: false), domain.jwksBody(shuffled: false))
        // The twin: the last consent's end left out (an account event changes no state itself), and the worlds differ.
        let partial = try replay(Array(events.dropLast(2)))
        XCTAssertNotEqual(snapshot(partial), snapshot(domain))
    }

    // MARK: - All or nothing

    func testARefusedGrant_LeavesNoConsentAndNoEvent() throws {
        // One code may be pending: bob's first sign-in would create his consent, then find the store full.
        let domain = try makeDomain { $0.maxPendingCodes = 1 }
        _ = try approve(domain, user: "alice")
        let before = snapshot(domain)
        let sequence = domain.lastEventSequence
        XCTAssertThrowsError(try approve(domain, user: "bob"))
        XCTAssertEqual(snapshot(domain), before, "a refused operation changes nothing")
        XCTAssertNil(domain.consent(userID: "bob", clientID: "com.example.web"))
        XCTAssertEqual(domain.lastEventSequence, sequence)
        // The twin: with room again, bob's sign-in grants his consent, reported as an event.
        _ = try redeem(domain, try XCTUnwrap(domain.reading { world, _ in world.pendingCodes.grants.keys.first }))
        _ = try approve(domain, user: "bob")
        XCTAssertNotNil(domain.consent(userID: "bob", clientID: "com.example.web"))
        XCTAssertTrue(domain.recordedEvents(after: sequence).contains {
            if case .consentGranted(let grant) = $0.event { grant.userID == "bob" } else { false }
        })
    }

    // MARK: - Races

    func testMovingTheClockPastARotation_ChangesTimeAndSignerInOneCriticalSection() async throws {
        let every: Int64 = 30 * 86_400
        let domain = try makeDomain { $0.scenario.signingKeys.rotation = .init(every: Int(every), publishAhead: 7 * 86_400, retireAfter: 49 * 86_400) }
        let owner = domain.owner
        // What anyone could observe between operations: the mock time and the signer, after each one.
        let seen = Mutex<[(now: Int64, kid: String?)]>([])
        owner.events.subscribe {
            let observed = owner.read { world, now in (now, world.signingKey?.keyID) }
            seen.withLock { $0.append(observed) }
        }
        try await domain.advanceClock(by: Double(every - 8 * 86_400))
        try await domain.advanceClock(by: Double(8 * 86_400))
        let observations = seen.withLock { $0 }
        XCTAssertGreaterThanOrEqual(observations.count, 2)
        let late = observations.filter { $0.now >= frozenNow + every }
        XCTAssertFalse(late.isEmpty)
        XCTAssertFalse(late.contains { $0.kid == "W2ek7HdPaL" }, "the new time was seen with the old signer: \(observations)")
        // The twin: before the activation time, the old key signs.
        XCTAssertTrue(observations.contains { $0.now < frozenNow + every && $0.kid == "W2ek7HdPaL" })
    }

    func testMockTime_NeverRunsBackwards_BetweenOperations() async throws {
        // Real time read before the lock: a later reader can hold an earlier time (here, 10 s earlier every other read).
        let reads = Atomic<Int>(0)
        let domain = try makeDomain { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: false)
            configuration.realTime = {
                let index = reads.add(1, ordering: .relaxed).newValue
                return 1_900_000_000 + Double(index) * 0.001 - (index % 2 == 0 ? 10 : 0)
            }
        }
        for index in 0..<20 { _ = try approve(domain, user: index % 2 == 0 ? "alice" : "bob") }
        let times = domain.recordedEvents().map(\.at)
        XCTAssertEqual(times.count, 22, "two first consents and 20 codes")
        XCTAssertEqual(times, times.sorted(), "mock time ran backwards between operations")
        let authTimes = domain.recordedEvents().compactMap { if case .codeIssued(_, let grant) = $0.event { grant.authTime } else { nil } }
        XCTAssertEqual(authTimes, authTimes.sorted())
        // The twin: moving the clock back on purpose still moves it back.
        try await domain.advanceClock(by: -3600)
        _ = try approve(domain, user: "alice")
        XCTAssertLessThan(try XCTUnwrap(domain.recordedEvents().last?.at), try XCTUnwrap(times.last))
    }

    func testDraws_ComeFromTheWorldsStream_SoARefusedOperationDrawsNothing() throws {
        // System randomness is one stream seeded at start (outside any lock): no OpenSSL refill
        // happens inside an operation, and only operations that succeed advance it.
        XCTAssertNotNil(RandomSource.system.resolved().derived("probe"), "system randomness resolves to a stream")
        XCTAssertNil(RandomSource.system.derived("probe"), "an unresolved source is not a stream yet")
        let refused = try makeDomain { $0.maxPendingCodes = 1 }
        let untouched = try makeDomain { $0.maxPendingCodes = 1 }
        // An operation that draws and then throws (or is refused) leaves the stream where it was.
        _ = try approve(refused, user: "alice")
        _ = try approve(untouched, user: "alice")
        struct Refused: Error {}
        XCTAssertThrowsError(try refused.owner.perform { (_, _, changes) throws(Refused) in
            _ = changes.random.bytes(64)
            throw Refused()
        })
        XCTAssertThrowsError(try approve(refused, user: "bob"), "the store is full")
        // Both redeem alice's code: the refused sign-in drew nothing, so the same seed gives the same tokens.
        let refusedCode = try XCTUnwrap(refused.reading { world, _ in world.pendingCodes.grants.keys.first })
        let untouchedCode = try XCTUnwrap(untouched.reading { world, _ in world.pendingCodes.grants.keys.first })
        XCTAssertEqual(refusedCode, untouchedCode)
        XCTAssertEqual(try redeem(refused, refusedCode)["access_token"], try redeem(untouched, untouchedCode)["access_token"])
        // The twin: a sign-in that succeeds draws, and the next tokens differ.
        _ = try approve(untouched, user: "bob")
        _ = try approve(refused, user: "alice")
        XCTAssertNotEqual(refused.reading { world, _ in world.pendingCodes.grants.keys.sorted() },
                          untouched.reading { world, _ in world.pendingCodes.grants.keys.sorted() })
    }

    // MARK: - Deterministic mode

    func testSeed_StartUpKeysBeyondTheKeyFiles_AreTheSameInEveryMock() throws {
        func kids(seed: UInt64?) throws -> [String] {
            try makeDomain { configuration in
                configuration.seed = seed
                configuration.scenario.signingKeys.count = 4
            }.keyRecords.map(\.keyID)
        }
        let seeded = try kids(seed: 7)
        XCTAssertEqual(seeded.count, 4)
        XCTAssertEqual(Array(seeded.prefix(3)), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"], "the files first")
        XCTAssertEqual(try kids(seed: 7), seeded, "the generated fourth key is the seed's")
        // The twins: another seed, or none, makes another key.
        XCTAssertNotEqual(try kids(seed: 8).last, seeded.last)
        XCTAssertNotEqual(try kids(seed: nil).last, try kids(seed: nil).last)
    }

    // MARK: - Fidelity

    func testAccountDeletion_EndsEveryAppGroupsTokens_AndTellsEachOfThem() throws {
        let domain = try makeDomain()
        _ = try redeem(domain, try approve(domain, user: "alice"))
        _ = try domain.nativeSignIn(userID: "alice", clientID: Self.teamBApp, scopes: ["email"], nonce: nil, hideEmail: true)
        let sequence = domain.lastEventSequence
        let told = try domain.accountEvent(.accountDelete, user: "alice", clientID: "com.example.app")
        XCTAssertEqual(told.count, 2)
        let records = domain.recordedEvents(after: sequence).compactMap { if case .accountEvent(let record) = $0.event { record } else { nil } }
        XCTAssertEqual(records.map(\.groupID), ["com.example.app", Self.teamBApp], "the named app group first, then every other one")
        XCTAssertEqual(records.map(\.subject), [teamSub("alice"), teamSub("alice", team: Self.teamB)])
        XCTAssertEqual(domain.consentCount, 0)
        let notifications = domain.recordedEvents(after: sequence).compactMap { recorded -> PendingNotification? in
            guard case .accountEvent(let record) = recorded.event else { return nil }
            return NotificationDeliverer.notification(for: record, sequence: recorded.sequence, scenario: domain.scenario, issuer: domain.issuer)
        }
        XCTAssertEqual(notifications.map(\.url), ["http://127.0.0.1:9/apple", "http://127.0.0.1:9/team-b"])
        XCTAssertEqual(notifications.map { $0.claims["aud"] }, ["com.example.app", .string(Self.teamBApp)])
        XCTAssertEqual(Set(notifications.compactMap { $0.claims["jti"]?.stringValue }).count, 2, "each notification its own jti")
        // The twin: a second deletion event is refused (the account is gone) and tells no one.
        XCTAssertEqual((assertThrows(try domain.accountEvent(.accountDelete, user: "alice", clientID: Self.teamBApp)) as? AccountEventError)?.kind, .notPossible)
        // A user who signed in to one app group only: one notification.
        _ = try redeem(domain, try approve(domain, user: "bob"))
        XCTAssertEqual(try domain.accountEvent(.accountDelete, user: "bob", clientID: "com.example.web").count, 1)
    }
}

@testable import AppleIDMock
import Foundation
import JOSE
import XCTest

/// Finding a user by `sub` or by relay address is a dictionary hit, not a scan of every user of
/// every team under the state lock (probe finding N4, issue 20). Socket-free: the domain and its
/// `World` directly. "Does not scan" is counted, not timed: a debug counter of the identifiers
/// computed in a scope.
final class UserIndexTests: XCTestCase {
    private static let teamA = "MOCKTEAM01"
    private static let teamB = "MOCKTEAM02"

    /// A domain over the built-in scenario plus a second team, clock frozen.
    private func makeDomain() throws -> AppleIDDomain {
        let pem = try P256PrivateKey.generate().publicKey.pem
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.scenario.teams.append(Scenario.Team(
            teamID: Self.teamB, developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY002", publicKeyPEM: pem)],
            clients: [Scenario.Client(clientID: "com.teamb.app", kind: .appID)]))
        configuration.log = { _ in }
        return try AppleIDDomain(configuration: configuration)
    }

    /// Adds `count` runtime users `u0`, `u1`, …
    private func addUsers(_ domain: AppleIDDomain, count: Int) throws {
        for index in 0..<count {
            _ = try domain.addUser(Scenario.User(id: "u\(index)", email: "u\(index)@example.com", givenName: "U", familyName: "\(index)"))
        }
    }

    /// How many `sub`s and relay addresses `body` computed on this thread.
    private func derivations<T>(_ body: () throws -> T) rethrows -> (T, Int) {
        let counter = Identity.DerivationCounter()
        let result = try Identity.$derivationCounter.withValue(counter) { try body() }
        return (result, counter.count)
    }

    // MARK: - By sub

    func testUserIndex_FindsUserBySubject_AmongManyUsers() throws {
        let domain = try makeDomain()
        try addUsers(domain, count: 1000)
        for user in ["alice", "bob", "u0", "u517", "u999"] {
            for team in [Self.teamA, Self.teamB] {
                let sub = teamSub(user, team: team)
                XCTAssertEqual(domain.reading { world, _ in world.user(subject: sub, teamID: team) }, user)
                let resolved = domain.reading { world, _ in world.resolveUser(sub) }
                XCTAssertEqual(resolved?.userID, user)
                XCTAssertEqual(resolved?.subjectTeam, team)
            }
        }
        _ = try domain.nativeSignIn(userID: "u517", clientID: "com.example.app", scopes: ["email"], nonce: nil, hideEmail: true)
        XCTAssertNoThrow(try domain.accountEvent(.emailDisabled, user: teamSub("u517"), clientID: "com.example.app"))
        XCTAssertEqual(domain.user("u517")?.relayDisabledTeams, [Self.teamA])
    }

    func testUserIndex_FindsNoUser_WhenSubjectUnknownOrOfAnotherTeam() throws {
        let domain = try makeDomain()
        try addUsers(domain, count: 1000)
        let unknown = teamSub("u1000")
        XCTAssertNil(domain.reading { world, _ in world.resolveUser(unknown) })
        XCTAssertNil(domain.reading { world, _ in world.user(subject: unknown, teamID: Self.teamA) })
        // Team B's sub names the user in team B only.
        XCTAssertNil(domain.reading { world, _ in world.user(subject: teamSub("u517", team: Self.teamB), teamID: Self.teamA) })
        XCTAssertNil(domain.reading { world, _ in world.user(subject: teamSub("u517"), teamID: Self.teamB) })
        XCTAssertEqual(try domain.credentialState(user: teamSub("u517", team: Self.teamB), clientID: "com.example.app"), .notFound)
        XCTAssertEqual(try domain.credentialState(user: unknown, clientID: "com.example.app"), .notFound)
        let error = assertThrows(try domain.accountEvent(.emailDisabled, user: unknown, clientID: "com.example.app"))
        XCTAssertEqual((error as? AccountEventError)?.kind, .unknown)
    }

    // MARK: - By relay address

    func testUserIndex_FindsUserByRelayAddress_AmongManyUsers() throws {
        let domain = try makeDomain()
        try addUsers(domain, count: 1000)
        for user in ["alice", "bob", "u0", "u517", "u999"] {
            for team in [Self.teamA, Self.teamB] {
                let address = Identity.relayAddress(teamID: team, userID: user)
                let found = domain.reading { world, _ in world.user(relayAddress: address) }
                XCTAssertEqual(found?.teamID, team)
                XCTAssertEqual(found?.userID, user)
            }
        }
    }

    func testUserIndex_FindsNoUser_WhenRelayAddressUnknown() throws {
        let domain = try makeDomain()
        try addUsers(domain, count: 1000)
        for address in [Identity.relayAddress(teamID: Self.teamA, userID: "u1000"), Identity.relayAddress(teamID: "OTHERTEAM1", userID: "u517"),
                        "u517@example.com", Identity.relayAddress(teamID: Self.teamA, userID: "u517").uppercased(), ""] {
            XCTAssertNil(domain.reading { world, _ in world.user(relayAddress: address) }, address)
        }
    }

    // MARK: - Reset

    func testUserIndex_ForgetsRuntimeUsers_WhenReset() throws {
        let domain = try makeDomain()
        try addUsers(domain, count: 100)
        _ = domain.reset()
        for team in [Self.teamA, Self.teamB] {
            XCTAssertNil(domain.reading { world, _ in world.resolveUser(teamSub("u42", team: team)) })
            XCTAssertNil(domain.reading { world, _ in world.user(relayAddress: Identity.relayAddress(teamID: team, userID: "u42")) })
            // The twin: the scenario's users stay.
            XCTAssertEqual(domain.reading { world, _ in world.resolveUser(teamSub("bob", team: team)) }?.userID, "bob")
            XCTAssertEqual(domain.reading { world, _ in world.user(relayAddress: Identity.relayAddress(teamID: team, userID: "bob")) }?.userID, "bob")
        }
        // And the id can be added again, found again.
        _ = try domain.addUser(Scenario.User(id: "u42", email: "u42@example.com", givenName: "U", familyName: "42"))
        XCTAssertEqual(domain.reading { world, _ in world.resolveUser(teamSub("u42")) }?.userID, "u42")
    }

    // MARK: - No scan

    func testUserIndex_ComputesNoIdentifier_WhenLookingUpAmongTenThousandUsers() throws {
        let domain = try makeDomain()
        try addUsers(domain, count: 10_000)
        let sub = teamSub("u9999", team: Self.teamB)
        let unknown = teamSub("nobody")
        // The first lookup indexes the scenario's own users, once: 3 users × 2 teams × (sub,
        // relay address), whatever number were added at runtime.
        let (_, first) = derivations { domain.reading { world, _ in world.resolveUser(unknown) } }
        XCTAssertEqual(first, 12)
        let (states, computed) = try derivations {
            [try domain.credentialState(user: sub, clientID: "com.teamb.app"), try domain.credentialState(user: unknown, clientID: "com.example.app"),
             try domain.credentialState(user: "nobody", clientID: "com.example.app")]
        }
        XCTAssertEqual(states, [.notFound, .notFound, .notFound])
        XCTAssertEqual(computed, 0)
        let (resolved, computedByResolve) = derivations { domain.reading { world, _ in world.resolveUser(sub)?.userID } }
        XCTAssertEqual(resolved, "u9999")
        XCTAssertEqual(computedByResolve, 0)
    }

    func testUserIndex_CountsIdentifiers_WhenAUserIsAdded() throws {
        // The twin of the test above: the counter sees the hashing it is there to see.
        let domain = try makeDomain()
        let (_, computed) = try derivations {
            try domain.addUser(Scenario.User(id: "dave", email: "dave@example.com", givenName: "C", familyName: "C"))
        }
        XCTAssertEqual(computed, 4, "a sub and a relay address in each of 2 teams")
    }

    func testUserIndex_HashesNothingUnderTheLock_WhenAddingAUserOrResetting() throws {
        let domain = try makeDomain()
        let entry = AddedUser(user: Scenario.User(id: "dave", email: "dave@example.com", givenName: "C", familyName: "C"),
                              teams: domain.scenario.teams)
        let (_, computedByAdd) = try derivations {
            try domain.owner.perform { world, _, changes throws(UserOperationError) in try world.addUser(entry, &changes) }
        }
        XCTAssertEqual(computedByAdd, 0)
        XCTAssertEqual(domain.reading { world, _ in world.resolveUser(teamSub("dave", team: Self.teamB)) }?.userID, "dave")
        let (_, computedByReset) = derivations { _ = domain.reset() }
        XCTAssertEqual(computedByReset, 0)
    }

    // MARK: - Bound

    func testAtScale_Scenario_RefusesMoreUsersThanTheIndexHolds_WhenTeamsAreMany() throws {
        let pem = try mockDeveloperKey.publicKey.pem
        var scenario = Scenario.default
        scenario.teams += (1..<200).map { index in
            Scenario.Team(teamID: "T" + String(index).leftPadded(to: 9), developerKeys: [Scenario.DeveloperKey(keyID: "MOCKKEY001", publicKeyPEM: pem)],
                          clients: [Scenario.Client(clientID: "com.team\(index).app", kind: .appID)])
        }
        scenario.users += (scenario.users.count..<10_001).map { Scenario.User(id: "u\($0)", email: "u@example.com", givenName: "U", familyName: "U") }
        let error = try XCTUnwrap(assertThrows(try Scenario.load(json: Array(scenario.prettyJSON.utf8))) as? ScenarioError)
        XCTAssertEqual(error.problems, [.init(path: "users", message: "expected at most 10000 users with 200 teams "
                                              + "(each user has a sub and a relay address in every team; at most 2000000 pairs)")])
        // The twin: one user fewer loads; and a mock of these teams holds as many at runtime.
        scenario.users.removeLast()
        XCTAssertEqual(try Scenario.load(json: Array(scenario.prettyJSON.utf8)).users.count, 10_000)
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario = scenario
        configuration.scenario.users = Array(scenario.users.prefix(2))
        configuration.log = { _ in }
        let domain = try AppleIDDomain(configuration: configuration)
        XCTAssertEqual(domain.reading { world, _ in world.userCapacity }, 10_000)
        XCTAssertEqual(try makeDomain().reading { world, _ in world.userCapacity }, 100_000, "2 teams: the old bound")
    }
}

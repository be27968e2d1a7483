@testable import AppleIDMock
import JOSE
import XCTest

/// `/auth/keys` reads a copy of the published keys kept beside the state's lock; these pin when
/// that copy follows the world, including after an operation that is refused.
final class PublishedKeysCopyTests: XCTestCase {
    private struct Refused: Error {}

    private func makeDomain() throws -> AppleIDDomain {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        return try AppleIDDomain(configuration: configuration)
    }

    private func publishedKids(_ domain: AppleIDDomain) throws -> [String] {
        let body = try JSONParser.parse(domain.jwksBody(shuffled: false))
        guard case .object(let object) = body, case .array(let keys)? = object["keys"] else { throw Refused() }
        return keys.compactMap { key in
            guard case .object(let fields) = key, case .string(let kid)? = fields["kid"] else { return nil }
            return kid
        }
    }

    func testAnOperationThatDecidesAKeyAndThenThrows_ChangesNothing() throws {
        // All or nothing (issue 20): a refused operation publishes no key and records no event.
        let domain = try makeDomain()
        let key = try KeyRing.generate(keyID: "Thrown0001")
        let before = domain.lastEventSequence
        XCTAssertThrowsError(try domain.owner.perform { (world, now, changes) throws(Refused) in
            try? world.publishWithinBound(key, now: now, &changes)
            throw Refused()
        })
        XCTAssertEqual(domain.keyRecords.map(\.keyID), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(try publishedKids(domain), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
        XCTAssertEqual(domain.lastEventSequence, before)
        // The twin: the same operation that does not throw publishes the key, and says so.
        try domain.owner.perform { (world, now, changes) throws(KeyOperationError) in try world.publishWithinBound(key, now: now, &changes) }
        XCTAssertEqual(try publishedKids(domain), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ", "Thrown0001"])
        XCTAssertEqual(domain.recordedEvents(after: before).map(\.event.name), ["key-published"])
    }

    func testARefusedOperationThatChangesNothing_LeavesAuthKeysAsItWas() throws {
        let domain = try makeDomain()
        let before = domain.jwksBody(shuffled: false)
        XCTAssertThrowsError(try domain.owner.perform { (_, _, _) throws(Refused) in throw Refused() })
        XCTAssertEqual(domain.jwksBody(shuffled: false), before)
        XCTAssertEqual(try publishedKids(domain), ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"])
    }
}

@testable import AppleIDMock
import Dispatch
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// Published keys are bounded (probe finding N7): `POST /__mock/keys` beyond
/// `signing_keys.max_published` is 409 naming the limit, `rotate` retires the oldest keys that no
/// longer sign to stay within it, and key generation runs off the threads that serve requests.
final class PublishedKeysBoundTests: XCTestCase {
    private static let initialKeys = ["W2ek7HdPaL", "Ymq4vB9xTz", "r8TcNf3QsJ"]

    private func makeDomain(maxPublished: Int) throws -> AppleIDDomain {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.signingKeys.maxPublished = maxPublished
        configuration.log = { _ in }
        return try AppleIDDomain(configuration: configuration)
    }

    private func published(_ domain: AppleIDDomain) -> [String] {
        domain.keyRecords.filter { $0.state != .retired }.map(\.keyID)
    }

    func testPublishKey_IsRefusedBeyondTheBound_AndAcceptedOnceAKeyIsRetired() async throws {
        let domain = try makeDomain(maxPublished: 4)
        let fourth = try await domain.publishKey(keyID: "Fourth0001", privateKey: nil)
        XCTAssertEqual(fourth, "Fourth0001")
        let refused = await assertThrowsAsync { try await domain.publishKey(keyID: "Fifth00001", privateKey: nil) }
        XCTAssertEqual(refused as? KeyOperationError, .tooMany("Fifth00001", limit: 4))
        XCTAssertEqual(published(domain), Self.initialKeys + ["Fourth0001"])
        try domain.retireKey("Ymq4vB9xTz")
        let fifth = try await domain.publishKey(keyID: "Fifth00001", privateKey: nil)
        XCTAssertEqual(fifth, "Fifth00001")
        XCTAssertEqual(published(domain).count, 4)
    }

    func testRotate_RetiresTheOldestKeysThatNoLongerSign_ToStayWithinTheBound() async throws {
        let domain = try makeDomain(maxPublished: 4)
        let first = try await domain.rotateKeys()
        XCTAssertEqual(first.previous, "W2ek7HdPaL")
        XCTAssertEqual(first.retired, [])
        let second = try await domain.rotateKeys()
        // The oldest published key that does not sign goes: W2ek7HdPaL signed first but was
        // replaced, so it is the oldest non-signing key.
        XCTAssertEqual(second.retired, ["W2ek7HdPaL"])
        for _ in 0..<6 {
            let step = try await domain.rotateKeys()
            XCTAssertEqual(step.retired.count, 1)
            XCTAssertEqual(published(domain).count, 4)
            XCTAssertEqual(domain.signingKeyID, step.keyID)
        }
        XCTAssertEqual(published(domain).count, 4)
    }

    func testScenario_RefusesAMaxPublishedBelowTheCountOrAboveOneHundred_NamingThePath() throws {
        for (value, accepted) in [(2, false), (101, false), (3, true), (100, true)] {
            let json = Scenario.default.prettyJSON.replacingOccurrences(of: #""max_published": 10"#, with: #""max_published": \#(value)"#)
            XCTAssertNotEqual(json, Scenario.default.prettyJSON)
            do {
                let scenario = try Scenario.load(json: Array(json.utf8))
                XCTAssertTrue(accepted, "\(value) was accepted")
                XCTAssertEqual(scenario.signingKeys.maxPublished, value)
            } catch {
                XCTAssertFalse(accepted, "\(value): \(error)")
                XCTAssertEqual("\(error)", "signing_keys.max_published: expected an integer from 3 to 100, found \(value)")
            }
        }
        XCTAssertEqual(Scenario.default.signingKeys.maxPublished, 10)
    }

    func testKeysRoute_AnswersConflictNamingTheLimit_AndRotateListsWhatItRetired() throws {
        let server = try startMock { $0.scenario.signingKeys.maxPublished = 3 }
        defer { server.stop() }
        let client = try server.client()
        let json = [("Content-Type", "application/json")]
        let refused = try client.roundTrip("POST", "/__mock/keys", headers: json, body: Array(#"{"kid":"Fourth0001"}"#.utf8))
        XCTAssertEqual(refused.status, 409)
        XCTAssertEqual(refused.text, #"{"error":"3 keys are published already, the most signing_keys.max_published allows: retire one first "#
                       + #"(rotate retires the oldest itself)","field":"kid","kid":"Fourth0001","limit":3}"#)
        let rotated = try client.roundTrip("POST", "/__mock/keys/rotate")
        XCTAssertEqual(rotated.status, 200)
        let body = try jsonObject(rotated.body)
        XCTAssertEqual(body["retired"], .array(["W2ek7HdPaL"]))
        let keys = try JWKSet(json: JSONParser.parse(try client.roundTrip("GET", "/auth/keys").body)).keys
        XCTAssertEqual(keys.count, 3)
    }

    func testKeyGeneration_RunsOffThePool_SoDeferredRoutesAnswerWhileRotationsWait() throws {
        let server = try startMock()
        defer { server.stop() }
        // Hold the one thread key work runs on: rotations queue behind it and cannot finish.
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        Task.detached {
            await server.domain.blockingWork.run {
                holding.signal()
                held.wait()
            }
        }
        holding.wait()
        let rotations = DispatchGroup()
        let statuses = LockedStatuses()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: rotations) {
                statuses.append((try? server.client().roundTrip("POST", "/__mock/keys/rotate"))?.status ?? -1)
            }
        }
        // Four rotations wait for the key thread, not on the pool: a deferred route that signs
        // still answers (before, each rotation held a pool thread while it generated).
        for _ in 0..<3 {
            let token = try server.client().roundTrip("POST", "/__mock/id-token", headers: [("Content-Type", "application/json")],
                                                      body: Array(#"{"user":"alice","client_id":"com.example.app"}"#.utf8))
            XCTAssertEqual(token.status, 200, token.text)
        }
        XCTAssertEqual(statuses.all, [], "a rotation finished while the key thread was held")
        held.signal()
        rotations.wait()
        XCTAssertEqual(statuses.all, [200, 200, 200, 200])
    }
}

/// Statuses collected from several threads.
private final class LockedStatuses: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int] = []

    func append(_ value: Int) { lock.withLock { values.append(value) } }

    var all: [Int] { lock.withLock { values } }
}

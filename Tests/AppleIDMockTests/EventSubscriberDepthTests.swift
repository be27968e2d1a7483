@testable import AppleIDMock
import Foundation
import JOSE
import XCTest

/// A subscriber of the event record (`MockState.subscribe`) is called after every operation that
/// records events (probe N1): it must be the same function at the same depth for the 10,000th
/// event as for the first, where a closure read out of a `Mutex` through `withLock { $0 }` came
/// back wrapped in two more reabstraction thunks each time, until the stack overflowed. (That
/// chain grew by four frames an event: the slack is crossed within the first few dozen.)
final class EventSubscriberDepthTests: XCTestCase {
    private static let events = 10_000
    /// How far the listener's stack frame may move between calls: a few frames of slack, where
    /// the old chain grew by four frames per event.
    private static let slack: UInt = 4096

    func testEventSubscriber_IsCalledAtTheSameStackDepth_AfterTenThousandEvents() throws {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        let domain = try AppleIDDomain(configuration: configuration)
        let credential = try domain.nativeSignIn(userID: "bob", clientID: "com.example.app", scopes: ["name", "email"], nonce: nil, hideEmail: true)
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.app", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        _ = try domain.token(form: ["client_id": "com.example.app", "client_secret": secret, "grant_type": "authorization_code",
                              "code": credential.authorizationCode])

        let depths = StackDepths()
        domain.events.subscribe {
            var marker = 0
            depths.record(withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) })
        }
        for index in 0..<Self.events {
            try domain.accountEvent(index % 2 == 0 ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            // Stop early, before a growing chain could overflow the test's stack.
            if depths.spread > Self.slack { break }
        }
        XCTAssertEqual(depths.calls, Self.events, "every event called the listener once")
        XCTAssertLessThanOrEqual(depths.spread, Self.slack, "the listener's stack frame moved: its closure is wrapped again per call")
    }
}

/// The highest and lowest stack addresses the listener saw, and how often it was called.
private final class StackDepths: @unchecked Sendable {
    private let lock = NSLock()
    private var lowest = UInt.max
    private var highest: UInt = 0
    private var count = 0

    func record(_ address: UInt) {
        lock.lock()
        defer { lock.unlock() }
        lowest = min(lowest, address)
        highest = max(highest, address)
        count += 1
    }

    var spread: UInt { lock.lock(); defer { lock.unlock() }; return highest >= lowest ? highest - lowest : 0 }
    var calls: Int { lock.lock(); defer { lock.unlock() }; return count }
}

import AppleIDMock
import Foundation
import JOSE
import XCTest

/// An event listener is called after every operation that records events (probe N1):
/// it must be the same function at the same depth for the 50,000th event as for the first,
/// where a closure read out of a `Mutex` through `withLock { $0 }` came back wrapped in two
/// more reabstraction thunks each time, until the stack overflowed.
final class OutboxListenerTests: XCTestCase {
    private static let events = 50_000
    /// How far the listener's stack frame may move between calls: a few frames of slack, where
    /// the old chain grew by four frames per event.
    private static let slack: UInt = 4096

    func testOutboxListener_IsCalledAtTheSameStackDepth_AfterFiftyThousandEvents() throws {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        let domain = try AppleIDDomain(configuration: configuration)
        let credential = try domain.nativeSignIn(userID: "bob", clientID: "com.example.app", scopes: ["name", "email"], nonce: nil, hideEmail: true)
        let secret = try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: "com.example.app", privateKey: mockDeveloperKey,
                                           issuedAt: frozenNow, lifetime: 3600)
        _ = try domain.token(["client_id": "com.example.app", "client_secret": secret, "grant_type": "authorization_code",
                              "code": credential.authorizationCode])

        let depths = StackDepths()
        let state = domain.state
        state.subscribe {
            var marker = 0
            depths.record(withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) })
        }
        var split: [Double] = []
        var started = Date()
        for index in 0..<Self.events {
            try state.accountEvent(index % 2 == 0 ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            if index == 999 || index == Self.events - 1001 { started = Date() }
            if index == 1999 || index == Self.events - 1 { split.append(Date().timeIntervalSince(started)) }
            // Stop early, before a growing chain could overflow the test's stack.
            if depths.spread > Self.slack { break }
        }
        print("outbox listener: \(depths.calls) calls; second thousand \(split.first.map { String(format: "%.3f", $0) } ?? "-") s,",
              "last thousand \(split.count > 1 ? String(format: "%.3f", split[1]) : "-") s; stack spread \(depths.spread) bytes")
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

@testable import AppleIDMock
import XCTest

// The few things a test reads or does behind the HTTP door, each in one function, so the
// issue 36 refactor (the state engine internal, `domain` internal) has one place to repoint.
// Everything else the converted suites do goes through `MockClient.respond`.

/// The domain behind either door.
private func domain(of client: any MockClient) -> AppleIDDomain {
    switch client {
    case let memory as InMemoryClient: memory.mock.domain
    case let live as LiveClient: live.server.domain
    default: preconditionFailure("no domain behind \(type(of: client))")
    }
}

/// How many authorization codes the mock holds, issued and neither redeemed nor pruned (no route
/// tells it: a redeemed or expired code must not stay in memory).
func pendingCodeCount(_ client: any MockClient) -> Int {
    domain(of: client).state.pendingCodeCount
}

/// One turn of the mock's background tick (prunes expired codes), at once rather than on its timer.
func runTick(_ client: any MockClient) {
    _ = domain(of: client).state.tick()
}

/// How many events the mock keeps (older ones are counted as missed by a reader far behind).
let eventLogCapacity = MockState.eventCapacity

/// Suspends until `feedReaders` long-polls of `/__mock/events` and `notificationReaders` of
/// `/__mock/notifications` are parked in the mock, so that what the test does next has to wake
/// them (nothing on the wire says a reader waits); fails the test after `seconds`.
func untilFeedReadersWait(_ client: any MockClient, _ feedReaders: Int = 1, notificationReaders: Int = 0, seconds: Double = 10,
                          file: StaticString = #filePath, line: UInt = #line) async throws {
    let (state, deliverer): (MockState, NotificationDeliverer) = switch client {
    case let memory as InMemoryClient: (memory.mock.domain.state, memory.mock.notifications)
    case let live as LiveClient: (live.server.domain.state, live.server.notifications)
    default: preconditionFailure("no mock behind \(type(of: client))")
    }
    let deadline = ContinuousClock.now + .seconds(seconds)
    while state.waitingReaders < feedReaders || deliverer.waitingReaders < notificationReaders {
        guard ContinuousClock.now < deadline else { return XCTFail("no reader parked within \(seconds) s", file: file, line: line) }
        try await Task.sleep(for: .milliseconds(2))
    }
}

/// Moves the mock clock `times` times by `seconds` through the Swift API (`ClockHandle`) rather
/// than as many `POST /__mock/clock` requests: for filling the event record fast. Issue 36's
/// `MockControls.advanceClock(by:)` is this call on both harnesses.
func advanceClockInProcess(_ client: any MockClient, by seconds: Double, times: Int = 1) throws {
    let clock = domain(of: client).clock
    for _ in 0..<times { try clock.advance(by: seconds) }
}

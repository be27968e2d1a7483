@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

// The few things a test reads or does behind the HTTP door, each in one function: the state
// engine is internal (issue 36), and these are the tests' read view over its owner. Everything
// else the converted suites do goes through `MockClient.respond`, `MockControls` or the domain's
// own methods.

/// The domain behind either door.
func domain(of client: any MockClient) -> AppleIDDomain {
    switch client {
    case let memory as InMemoryClient: memory.mock.domain
    case let live as LiveClient: live.server.domain
    default: preconditionFailure("no domain behind \(type(of: client))")
    }
}

/// How many authorization codes the mock holds, issued and neither redeemed nor pruned (no route
/// tells it: a redeemed or expired code must not stay in memory).
func pendingCodeCount(_ client: any MockClient) -> Int {
    domain(of: client).pendingCodeCount
}

/// One turn of the mock's background tick (prunes expired codes), at once rather than on its timer.
func runTick(_ client: any MockClient) {
    domain(of: client).tick(stopping: { false })
}

/// How many events the mock keeps (older ones are counted as missed by a reader far behind).
let eventLogCapacity = EventStream.capacity

/// Suspends until `feedReaders` long-polls of `/__mock/events` and `notificationReaders` of
/// `/__mock/notifications` are parked in the mock, so that what the test does next has to wake
/// them (nothing on the wire says a reader waits); fails the test after `conditionBound`.
func untilFeedReadersWait(_ client: any MockClient, _ feedReaders: Int = 1, notificationReaders: Int = 0,
                          file: StaticString = #filePath, line: UInt = #line) async throws {
    let (events, deliverer): (EventStream, NotificationDeliverer) = switch client {
    case let memory as InMemoryClient: (memory.mock.domain.events, memory.mock.notifications)
    case let live as LiveClient: (live.server.domain.events, live.server.notifications)
    default: preconditionFailure("no mock behind \(type(of: client))")
    }
    let parked = try await eventually { events.waitingReaders >= feedReaders && deliverer.waitingReaders >= notificationReaders }
    if !parked { XCTFail("no reader parked within \(conditionBound)", file: file, line: line) }
}

/// Moves the mock clock `times` times by `seconds` through the domain (the operation
/// `MockControls.advanceClock(by:)` runs) rather than as many `POST /__mock/clock` requests: for
/// filling the event record fast.
func advanceClockInProcess(_ client: any MockClient, by seconds: Double, times: Int = 1) async throws {
    let domain = domain(of: client)
    for _ in 0..<times { try await domain.moveClock([.advance(seconds)]) }
}

// MARK: - The tests' read view over the state

extension AppleIDDomain {
    /// Runs `body` over the world as it stands, at mock now in whole seconds (nothing changes).
    func reading<T>(_ body: (World, Int64) -> T) -> T { owner.read(body) }

    /// How many consents are live.
    var consentCount: Int { owner.read { world, _ in world.consents.count } }

    /// The newest event's sequence number (0 before the first).
    var lastEventSequence: UInt64 { events.lastSequence }

    /// The kept events after `after`, oldest first.
    func recordedEvents(after: UInt64 = 0) -> [RecordedEvent] { events.events(after: after).events }

    /// The kid that signs new tokens now.
    var signingKeyID: String? { keys.signingKeyID }

    /// Every key the mock has known, in publication order.
    var keyRecords: [KeyRecord] { keys.records }

    /// The published public key with `kid`; nil once retired or never published.
    func publicKey(keyID: String) -> RSAPublicKey? { publishedKey(keyID)?.privateKey.publicKey }

    /// `/auth/keys`' body as served now (in publication order unless `shuffled`).
    func jwksBody(shuffled: Bool = false) -> [UInt8] { KeysEndpoint.body(publishedKeys.fragments(shuffled: shuffled)) }

    /// The world's comparable state (users, consents, codes, keys, clock, …) and its faults.
    var worldSnapshot: World.Snapshot { owner.read { world, _ in world.snapshot } }

    /// Moves the clock by `seconds` (back when negative), as `POST /__mock/clock` does.
    func advanceClock(by seconds: Double) async throws { try await moveClock([.advance(seconds)]) }

    /// Sets the clock to `instant` (seconds since 1970).
    func setClock(to instant: Double) async throws { try await moveClock([.set(instant)]) }

    /// `/auth/token` with the form `form`, as its endpoint decodes it; Apple's JSON answer
    /// rendered as the endpoint renders it. A refusal throws its `OAuthError`.
    func token(form: [String: String]) throws -> JSONObject {
        let request = TokenRequest(clientID: form["client_id"], clientSecret: form["client_secret"], grantType: form["grant_type"],
                                   code: form["code"], redirectURI: form["redirect_uri"], codeVerifier: form["code_verifier"],
                                   refreshToken: form["refresh_token"], scope: form["scope"])
        do {
            return TokenEndpoint.json(try token(request))
        } catch {
            switch error {
            case .refused(let refusal): throw refusal
            case .signing(let reason): throw TokenSigningFailed(reason: reason)
            }
        }
    }

    /// `/auth/revoke` with the form `form`.
    func revoke(form: [String: String]) throws(OAuthError) {
        try revoke(RevokeRequest(clientID: form["client_id"], clientSecret: form["client_secret"], token: form["token"]))
    }

    /// `/auth/usermigrationinfo` with the form `form` and `bearer`; Apple's JSON answer.
    func userMigrationInfo(form: [String: String], bearer: String?) throws(OAuthError) -> JSONObject {
        MigrationEndpoint.json(try userMigrationInfo(MigrationRequest(clientID: form["client_id"], clientSecret: form["client_secret"], bearer: bearer,
                                                                      subject: form["sub"], target: form["target"], transferSubject: form["transfer_sub"])))
    }
}

/// Fails unless `body` throws; returns the error for further checks (`XCTAssertThrowsError`
/// cannot take `await`).
@discardableResult
func assertThrowsAsync<T>(_ body: () async throws -> T, file: StaticString = #filePath, line: UInt = #line) async -> (any Error)? {
    do {
        let value = try await body()
        XCTFail("expected an error, got \(value)", file: file, line: line)
        return nil
    } catch {
        return error
    }
}

/// The route table of `configuration`'s mock at `baseURL`, built alone: no socket, no deliverer,
/// no journal (what `AppleIDMockServer.routes()` gave before issue 36).
func routeTable(_ configuration: AppleIDMockConfiguration = AppleIDMockConfiguration(), baseURL: String = "http://127.0.0.1:8080") throws -> RouteTable {
    let domain = try AppleIDDomain(configuration: configuration)
    let site = SiteAddress()
    site.set(baseURL)
    return Routes.table(domain: domain, site: site, control: MockAssembly.controlGuard(configuration),
                        requests: RequestLog(level: configuration.logLevel, sink: configuration.log))
}

// MARK: - Waiting on a condition

/// How long a wait on a condition may last before it gives up: a bound against a hang, never a
/// measure of speed. A quiet machine needs milliseconds of it; a loaded one may need much more,
/// and a test that failed at a tighter bound would fail for the machine, not the code.
let conditionBound: Duration = .seconds(120)

/// Polls `condition` every few milliseconds, blocking this thread, until it holds or
/// `conditionBound` has passed; returns whether it held (the caller asserts what it needs).
@discardableResult
func eventuallyTrue(_ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + conditionBound
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        usleep(5_000)
    }
    return try condition()
}

/// The same, suspending the task instead of blocking its thread.
@discardableResult
func eventually(_ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + conditionBound
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        try await Task.sleep(for: .milliseconds(2))
    }
    return try condition()
}

@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import Synchronization
import XCTest

/// Account events (docs/apple-behaviour.md §7) as domain operations without a socket, their
/// notifications through a deliverer with a scripted transport, and the control route's refusals
/// in memory.
final class AccountEventTests: XCTestCase {
    private func domain(_ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> AppleIDDomain {
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
        configuration.log = { _ in }
        adjust(&configuration)
        return try AppleIDDomain(configuration: configuration)
    }

    private func secret(_ clientID: String = "com.example.app") throws -> String {
        try ClientSecret.make(teamID: "MOCKTEAM01", keyID: "MOCKKEY001", clientID: clientID, privateKey: mockDeveloperKey,
                              issuedAt: frozenNow, lifetime: 3600)
    }

    /// A native sign-in redeemed at the token endpoint; returns the refresh token.
    private func signIn(_ domain: AppleIDDomain, user: String = "alice", hideEmail: Bool? = nil) throws -> String {
        let credential = try domain.nativeSignIn(userID: user, clientID: "com.example.app", scopes: ["name", "email"], nonce: nil, hideEmail: hideEmail)
        let answer = try domain.token(form: ["client_id": "com.example.app", "client_secret": try secret(), "grant_type": "authorization_code",
                                       "code": credential.authorizationCode])
        return try XCTUnwrap(answer["refresh_token"]?.stringValue)
    }

    private func refresh(_ domain: AppleIDDomain, _ token: String) throws -> JSONObject {
        try domain.token(form: ["client_id": "com.example.app", "client_secret": try secret(), "grant_type": "refresh_token", "refresh_token": token])
    }

    /// Notifications taken so far, by domain: the last event read.
    private var taken: [ObjectIdentifier: UInt64] = [:]

    /// The notifications the events since the last call call for, as the deliverer derives them.
    private func takeNotifications(_ domain: AppleIDDomain) -> [PendingNotification] {
        let (events, _) = domain.events.events(after: taken[ObjectIdentifier(domain)] ?? 0)
        taken[ObjectIdentifier(domain)] = events.last?.sequence ?? taken[ObjectIdentifier(domain)]
        return events.compactMap { recorded in
            guard case .accountEvent(let event) = recorded.event else { return nil }
            return NotificationDeliverer.notification(for: event, sequence: recorded.sequence, scenario: domain.scenario, issuer: domain.issuer)
        }
    }

    private func event(_ notification: PendingNotification) throws -> JSONObject {
        guard case .string(let text)? = notification.claims["events"], case .object(let event) = try JSONParser.parse(Array(text.utf8)) else {
            throw JOSEError.malformedJWS("events is not a JSON-encoded string")
        }
        return event
    }

    func testConsentRevoked_EndsTheConsent_RefreshAnswersTheKnob_NextSignInIsFirstAgain() throws {
        let domain = try domain()
        let refreshToken = try signIn(domain)
        XCTAssertNoThrow(try refresh(domain, refreshToken))
        try domain.accountEvent(.consentRevoked, user: "alice", clientID: "com.example.web")
        XCTAssertEqual(assertThrows(try refresh(domain, refreshToken)) as? OAuthError, OAuthError("invalid_request"))
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .revoked)
        let again = try domain.nativeSignIn(userID: "alice", clientID: "com.example.app", scopes: ["name", "email"], nonce: nil, hideEmail: nil)
        XCTAssertEqual(again.email, "alice@example.com", "a first authorization again")
        let queued = takeNotifications(domain)
        XCTAssertEqual(queued.count, 1)
        let notification = try XCTUnwrap(queued.first)
        XCTAssertEqual(notification.url, "http://127.0.0.1:9/apple")
        XCTAssertEqual(notification.claims.keys, ["iss", "aud", "iat", "exp", "jti", "events"])
        XCTAssertEqual(notification.claims["aud"], "com.example.app", "the group's primary App ID, even for an event named by its Services ID")
        XCTAssertEqual(notification.claims["iat"], .int(frozenNow))
        XCTAssertEqual(notification.claims["exp"], .int(frozenNow + 86_400))
        XCTAssertEqual(try event(notification), ["type": "consent-revoked", "sub": .string(teamSub("alice")), "event_time": .int(frozenNow * 1000)])
        // The twin: twice is not possible — nothing to revoke.
        let error = assertThrows(try domain.accountEvent(.consentRevoked, user: "bob", clientID: "com.example.app")) as? AccountEventError
        XCTAssertEqual(error, AccountEventError(.notPossible, message: "\"bob\" has not signed in to this app group", field: "user"))
    }

    func testAccountDeletion_KillsTokens_RefusesSignIn_AndCredentialStateReadsRevoked() throws {
        let domain = try domain { $0.scenario.compatibility.accountDeletionEventType = "account-delete" }
        let refreshToken = try signIn(domain)
        try domain.accountEvent(.accountDelete, user: teamSub("alice"), clientID: "com.example.app")
        XCTAssertThrowsError(try refresh(domain, refreshToken))
        let refused = assertThrows(try domain.nativeSignIn(userID: "alice", clientID: "com.example.app", scopes: [], nonce: nil, hideEmail: nil))
        XCTAssertEqual(refused as? AppleIDDomain.SignInRefusal, .invalid(field: "user", message: "the Apple Account of \"alice\" was deleted"))
        XCTAssertEqual(try domain.credentialState(user: "alice", clientID: "com.example.app"), .revoked)
        XCTAssertEqual(try event(try XCTUnwrap(takeNotifications(domain).first))["type"], "account-delete")
        XCTAssertEqual(assertThrows(try domain.accountEvent(.emailEnabled, user: "alice", clientID: "com.example.app")) as? AccountEventError,
                       AccountEventError(.notPossible, message: "the Apple Account of \"alice\" was deleted", field: "user"))
        // Bob is untouched.
        XCTAssertNoThrow(try signIn(domain, user: "bob"))
        XCTAssertTrue(domain.recordedEvents().contains { $0.event == .accountDeleted(userID: "alice") })
    }

    func testEmailEvents_NeedARelayAddress_ToggleForwarding_AndCarryTheAddress() throws {
        let domain = try domain { $0.scenario.compatibility.eventTimeUnit = .seconds }
        _ = try signIn(domain, user: "alice", hideEmail: false)
        XCTAssertEqual(assertThrows(try domain.accountEvent(.emailDisabled, user: "alice", clientID: "com.example.app")) as? AccountEventError,
                       AccountEventError(.notPossible, message: "\"alice\" does not use a relay address with this app group", field: "user"))
        _ = try signIn(domain, user: "bob")
        try domain.accountEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        XCTAssertEqual(domain.user("bob")?.relayDisabledTeams, ["MOCKTEAM01"])
        try domain.accountEvent(.emailEnabled, user: "bob", clientID: "com.example.app")
        XCTAssertEqual(domain.user("bob")?.relayDisabledTeams, [])
        let queued = takeNotifications(domain)
        XCTAssertEqual(try queued.map { try event($0)["type"] }, ["email-disabled", "email-enabled"])
        XCTAssertEqual(try event(queued[0]), ["type": "email-disabled", "sub": .string(teamSub("bob")), "event_time": .int(frozenNow),
                                               "email": .string(Identity.relayAddress(teamID: "MOCKTEAM01", userID: "bob")), "is_private_email": "true"])
        XCTAssertNoThrow(try signIn(domain, user: "bob"), "forwarding is not sign-in")
    }

    func testEvents_RefuseUnknownUsersAndClients() throws {
        let domain = try domain()
        XCTAssertEqual(assertThrows(try domain.accountEvent(.consentRevoked, user: "mallory", clientID: "com.example.app")) as? AccountEventError,
                       AccountEventError(.unknown, message: "no user \"mallory\"", field: "user"))
        XCTAssertEqual(assertThrows(try domain.accountEvent(.consentRevoked, user: "alice", clientID: "com.nope")) as? AccountEventError,
                       AccountEventError(.unknown, message: "no client \"com.nope\" in the scenario", field: "client_id"))
        XCTAssertTrue(takeNotifications(domain).isEmpty)
    }

    func testRevokeNotifies_OnlyWhenTheKnobIsOn() throws {
        for notifies in [false, true] {
            let domain = try domain { $0.scenario.compatibility.revokeNotifies = notifies }
            let refreshToken = try signIn(domain)
            try domain.revoke(form: ["client_id": "com.example.app", "client_secret": try secret(), "token": refreshToken])
            let queued = takeNotifications(domain)
            XCTAssertEqual(queued.count, notifies ? 1 : 0)
            if notifies { XCTAssertEqual(try event(queued[0])["type"], "consent-revoked") }
        }
    }

    func testTimeline_FiresAsTheClockPassesIt_AndReportsWhatCannotHappen() async throws {
        let domain = try domain { configuration in
            configuration.scenario.events = [.init(at: 3600, type: "consent-revoked", user: "alice", clientID: "com.example.app"),
                                             .init(at: 7200, type: "email-disabled", user: "alice", clientID: "com.example.app")]
        }
        let refreshToken = try signIn(domain)
        try await domain.advanceClock(by: 3599)
        XCTAssertNoThrow(try refresh(domain, refreshToken))
        XCTAssertTrue(takeNotifications(domain).isEmpty)
        try await domain.advanceClock(by: 1)
        XCTAssertEqual(try takeNotifications(domain).map { try event($0)["type"] }, ["consent-revoked"])
        XCTAssertThrowsError(try refresh(domain, refreshToken))
        try await domain.advanceClock(by: 3600)
        XCTAssertTrue(domain.recordedEvents().contains { $0.event == .timelineEventRefused(index: 1, message: "\"alice\" does not use a relay address with this app group") })
        // A bad timeline is refused at load, naming the path.
        var scenario = Scenario.default
        scenario.events = [.init(at: 10, type: "account-gone", user: "mallory", clientID: "com.nope")]
        let problems = (assertThrows(try Scenario.load(json: Array(scenario.prettyJSON.utf8))) as? ScenarioError)?.problems.map(\.path)
        XCTAssertEqual(problems, ["events[0].type", "events[0].user", "events[0].client_id"])
    }

    func testEventFeed_ShowsEveryAttempt_WithItsNotificationsID_AndTheOutcomeAfterIt() async throws {
        let transport = ScriptedTransport([500, 200])
        let mock = try inMemoryMock { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: true)
            configuration.scenario.teams[0].notificationURL = "https://backend.example/apple"
            configuration.scenario.compatibility.notificationRetryDelays = [0]
            configuration.notificationTransport = transport
            configuration.notificationShutdownGrace = 0
        }
        addTeardownBlock { await mock.stop() }
        _ = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        let fired = await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(fired.status.code, 202, fired.text)
        let notification = try XCTUnwrap(try jsonObject(fired.body)["notification"]?.intValue)
        // Until the delivery settled: the feed's reader waits for the event, as a test of a backend would.
        var attempts: [JSONObject] = []
        for _ in 0..<20 where attempts.last?["outcome"] != "delivered" {
            let page = await mock.get("/__mock/events?type=notification-attempted&wait=10&after=\(attempts.last?["sequence"]?.intValue ?? 0)")
            XCTAssertEqual(page.status.code, 200, page.text)
            attempts += try jsonObject(page.body)["events"]?.arrayValue?.compactMap(\.objectValue) ?? []
        }
        XCTAssertEqual(attempts.map { $0["notification"] }, [.int(notification), .int(notification)])
        XCTAssertEqual(attempts.map { $0["status"] }, [500, 200])
        XCTAssertEqual(attempts.map { $0["outcome"] }, ["pending", "delivered"], "a retry to come, then delivered")
        XCTAssertEqual(attempts.map { $0["error"] }, [.null, .null])
        // In the one sequence, after the account event that queued it; the log says the same.
        let all = try jsonObject(await mock.get("/__mock/events").body)["events"]?.arrayValue?.compactMap(\.objectValue) ?? []
        let account = try XCTUnwrap(all.firstIndex { $0["type"] == "account-event" })
        let first = try XCTUnwrap(all.firstIndex { $0["type"] == "notification-attempted" })
        XCTAssertLessThan(account, first)
        XCTAssertEqual(all.compactMap { $0["sequence"]?.intValue }, Array(1...Int64(all.count)))
        // The log settles a moment after the feed shows the delivered attempt (seen once on a loaded
        // machine): wait for it to settle, as a backend's test would.
        _ = await mock.notificationLog(after: 0, waitingUpTo: .seconds(10))
        let log = try jsonObject(await mock.get("/__mock/notifications").body)["notifications"]?.arrayValue?.first?.objectValue
        XCTAssertEqual(log?["id"], .int(notification))
        XCTAssertEqual(log?["attempts"]?.arrayValue?.count, 2)
        // The twin: a group with no notification URL is never attempted, so the feed shows no attempt.
        let silent = try inMemoryMock { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: true)
            configuration.notificationTransport = ScriptedTransport([200])
        }
        addTeardownBlock { await silent.stop() }
        _ = try await silent.signInNative(user: "alice", clientID: "com.example.app")
        let quiet = await silent.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(quiet.status.code, 202)
        let settled = await silent.notificationLog(after: 0, waitingUpTo: .seconds(10))
        XCTAssertEqual(settled.map(\.outcome), [.noURL])
        let listed = await silent.get("/__mock/events?type=notification-attempted")
        let none = try jsonObject(listed.body)["events"]?.arrayValue
        XCTAssertEqual(none, [])
    }

    func testDeliverer_RetriesOnTheSchedule_SignsOnce_AndRecordsEveryAttempt() throws {
        let domain = try domain { $0.scenario.compatibility.notificationRetryDelays = [0, 0] }
        let transport = ScriptedTransport([500, 500, 200])
        let deliverer = NotificationDeliverer(domain: domain, scenario: domain.scenario, issuer: domain.issuer, transport: transport, retryDelays: [0, 0], workers: 1,
                                              realTime: { Date().timeIntervalSince1970 }, log: { _ in }) { name, body in LoopThread.start(name: name, body) }
        defer { deliverer.stopNow() }
        _ = try signIn(domain)
        try domain.accountEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        let record = try XCTUnwrap(awaitSettled(deliverer).first)
        XCTAssertEqual(record.outcome, .delivered)
        XCTAssertEqual(record.attempts.map(\.status), [500, 500, 200])
        let bodies = transport.bodies
        XCTAssertEqual(Set(bodies).count, 1, "the same JWT every attempt")
        let jwt = try XCTUnwrap(record.jwt)
        XCTAssertEqual(bodies.first, #"{"payload":"\#(jwt)"}"#)
        let token = try CompactJWS.parse(jwt)
        XCTAssertEqual(token.keyID, "W2ek7HdPaL")
        XCTAssertTrue(token.verifyRS256(with: try XCTUnwrap(domain.publicKey(keyID: "W2ek7HdPaL"))))

        // The twin: a receiver that keeps failing exhausts the schedule.
        let failing = try self.domain()
        let deadEnd = NotificationDeliverer(domain: failing, scenario: failing.scenario, issuer: failing.issuer, transport: ScriptedTransport([503]), retryDelays: [0, 0], workers: 1,
                                            realTime: { Date().timeIntervalSince1970 }, log: { _ in }) { name, body in LoopThread.start(name: name, body) }
        defer { deadEnd.stopNow() }
        _ = try signIn(failing)
        try failing.accountEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        let failed = try XCTUnwrap(awaitSettled(deadEnd).first)
        XCTAssertEqual(failed.outcome, .failed)
        XCTAssertEqual(failed.attempts.map(\.status), [503, 503, 503])
    }

    func testDeliverer_SignsWithTheKeyThatSignedWhenTheEventHappened_EvenAfterARotation() async throws {
        let domain = try domain()
        _ = try signIn(domain)
        _ = try signIn(domain, user: "bob")
        try domain.accountEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        let rotated = try await domain.rotateKeys().keyID
        // The twin: an event after the rotation is signed by the new key.
        try domain.accountEvent(.consentRevoked, user: "bob", clientID: "com.example.app")
        let deliverer = NotificationDeliverer(domain: domain, scenario: domain.scenario, issuer: domain.issuer, transport: ScriptedTransport([200]),
                                              retryDelays: [], workers: 1, realTime: { Date().timeIntervalSince1970 }, log: { _ in }) { name, body in
            LoopThread.start(name: name, body)
        }
        defer { deliverer.stopNow() }
        deliverer.collect()
        var records = await deliverer.await(after: 0, seconds: 20)
        while records.count < 2 || records.contains(where: { $0.outcome == .pending }) { records = await deliverer.await(after: 0, seconds: 20) }
        XCTAssertEqual(try records.map { try CompactJWS.parse(try XCTUnwrap($0.jwt)).keyID }, ["W2ek7HdPaL", rotated])
        XCTAssertEqual(records.map { $0.attempts.first?.at }, [Double(frozenNow), Double(frozenNow)], "attempts are stamped in mock time")
    }

    func testDeliverer_RecordsNoURL_WhenTheGroupRegisteredNone() throws {
        let domain = try domain { $0.scenario.teams[0].notificationURL = nil }
        let transport = ScriptedTransport([200])
        let deliverer = NotificationDeliverer(domain: domain, scenario: domain.scenario, issuer: domain.issuer, transport: transport, retryDelays: [], workers: 1,
                                              realTime: { Date().timeIntervalSince1970 }, log: { _ in }) { name, body in LoopThread.start(name: name, body) }
        defer { deliverer.stopNow() }
        _ = try signIn(domain)
        try domain.accountEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        let record = try XCTUnwrap(awaitSettled(deliverer).first)
        XCTAssertEqual(record.outcome, .noURL)
        XCTAssertEqual(record.attempts, [])
        XCTAssertEqual(transport.bodies, [])
    }

    func testEventsRoute_AnswersBadInputNamingTheField() async throws {
        let mock = try frozenClient()
        func post(_ body: String) async throws -> MockAnswer { try await mock.postJSON("/__mock/events", body) }
        let unknownType = try await post(#"{"type":"account-gone","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(unknownType.text,
                       #"{"error":"expected \"consent-revoked\", \"account-delete\", \"account-deleted\", \"email-disabled\", \"email-enabled\" or \"password-changed\"","field":"type"}"#)
        let unknownUser = try await post(#"{"type":"consent-revoked","user":"mallory","client_id":"com.example.app"}"#)
        XCTAssertEqual(unknownUser.status, 404)
        XCTAssertEqual(unknownUser.text, #"{"error":"no user \"mallory\"","field":"user"}"#)
        assertStatus(try await post(#"{"type":"consent-revoked","user":"alice","client_id":"com.nope"}"#), 404)
        assertStatus(try await post(#"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#), 409)
        let missing = try await post(#"{"type":"consent-revoked","user":"alice"}"#)
        XCTAssertEqual(missing.text, #"{"error":"missing required field","field":"client_id"}"#)
        _ = try await mock.nativeSignIn()
        let accepted = try await post(#"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(accepted.status, 202)
        XCTAssertEqual(accepted.text, #"{"notification":1,"notifications":[1],"type":"consent-revoked","user":"alice"}"#)
        let log = try await mock.get("/__mock/notifications?after=0&wait=5")
        XCTAssertEqual(try jsonObject(log.body)["notifications"]?.arrayValue?.first?.objectValue?["outcome"], "no_url")
        let tooLong = try await mock.get("/__mock/notifications?wait=61")
        XCTAssertEqual(tooLong.text, #"{"error":"expected seconds from 0 to 60","field":"wait"}"#)
        assertStatus(try await mock.get("/__mock/notifications?after=x"), 400)
    }

    private func awaitSettled(_ deliverer: NotificationDeliverer) throws -> [NotificationRecord] {
        let semaphore = DispatchSemaphore(value: 0)
        let found = Mutex<[NotificationRecord]>([])
        Task {
            let records = await deliverer.await(after: 0, seconds: 20)
            found.withLock { $0 = records }
            semaphore.signal()
        }
        semaphore.wait()
        return found.withLock { $0 }
    }
}

/// A transport that answers the statuses it was given, in turn (the last one forever after).
private final class ScriptedTransport: NotificationTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int]
    private var received: [String] = []

    init(_ statuses: [Int]) { self.statuses = statuses }

    var bodies: [String] { lock.withLock { received } }

    func post(url: String, body: [UInt8]) -> NotificationRecord.Attempt {
        lock.withLock {
            received.append(String(decoding: body, as: UTF8.self))
            let status = statuses.count > 1 ? statuses.removeFirst() : statuses[0]
            return NotificationRecord.Attempt(at: Date().timeIntervalSince1970, status: status, error: nil)
        }
    }
}

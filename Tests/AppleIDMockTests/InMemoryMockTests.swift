import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// `AppleIDMockServer.inMemory`: the server's route table with no socket — control guard,
/// fallbacks and the notification deliverer included — and its `stop()`.
final class InMemoryMockTests: XCTestCase {
    func testInMemory_EventsPost_AnswersItsNotificationID_AndTheInjectedTransportReceivesIt() async throws {
        let transport = RecordingTransport()
        let mock = try inMemoryMock {
            $0.scenario.teams[0].notificationURL = "https://backend.example/apple/notifications"
            $0.notificationTransport = transport
        }
        addTeardownBlock { await mock.stop() }
        let signIn = await mock.postJSON("/__mock/sign-in", #"{"user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(signIn.status.code, 200, signIn.text)

        let fired = await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(fired.status.code, 202)
        XCTAssertEqual(fired.text, #"{"notification":1,"notifications":[1],"type":"consent-revoked","user":"alice"}"#)

        let settled = await mock.notifications.await(after: 0, seconds: 20)
        let record = try XCTUnwrap(settled.first)
        XCTAssertEqual(record.outcome, .delivered)
        let jwt = try XCTUnwrap(record.jwt)
        XCTAssertEqual(transport.posts.map(\.url), ["https://backend.example/apple/notifications"])
        XCTAssertEqual(transport.posts.map(\.body), [#"{"payload":"\#(jwt)"}"#])
        let token = try CompactJWS.parse(jwt)
        XCTAssertTrue(token.verifyRS256(with: try XCTUnwrap(mock.domain.publicKey(keyID: try XCTUnwrap(token.keyID)))))
        XCTAssertEqual(PendingNotificationEvent.type(of: token), "consent-revoked")
        // The delivery log over the control API says the same.
        let log = try jsonObject(await mock.get("/__mock/notifications").body)
        XCTAssertEqual(log["notifications"]?.arrayValue?.first?.objectValue?["outcome"], "delivered")
    }

    func testInMemory_RefusesWhatTheControlGuardRefuses_AndAnswersFallbacksAsTheServerDoes() async throws {
        let mock = try inMemoryMock()
        addTeardownBlock { await mock.stop() }
        let rebound = await mock.respond(.get, "/__mock/health", headers: ["Host": "evil.example"])
        XCTAssertEqual(rebound.status.code, 403)
        XCTAssertEqual(rebound.text, #"{"error":"Host \"evil.example\" is not allowed for the control API (allow a name with --allowed-host)","field":"Host"}"#)
        let plain = await mock.respond(.post, "/__mock/events", headers: ["Content-Type": "text/plain"], body: Array("{}".utf8))
        XCTAssertEqual(plain.status.code, 415)
        // The twin: a local caller with JSON gets through.
        let local = await mock.respond(.get, "/__mock/health", headers: ["Host": "127.0.0.1:8080"])
        XCTAssertEqual(local.status.code, 200)
        // MiniHTTP's plain 404 and 405 on Apple's paths; the control API's JSON under /__mock/.
        let missing = await mock.get("/auth/nothing")
        XCTAssertEqual(missing.status.code, 404)
        XCTAssertEqual(missing.headers["Content-Type"], "text/plain; charset=utf-8")
        let wrongMethod = await mock.respond(.delete, "/auth/keys")
        XCTAssertEqual(wrongMethod.status.code, 405)
        XCTAssertEqual(wrongMethod.headers["Allow"], "GET, HEAD")
        let controlMissing = await mock.get("/__mock/nothing")
        XCTAssertEqual(controlMissing.headers["Content-Type"], "application/json")
    }

    func testInMemoryStop_ReturnsInAsyncCode_AndLaterRequestsAnswer503() async throws {
        let mock = try inMemoryMock()
        let before = await mock.get("/auth/keys")
        XCTAssertEqual(before.status.code, 200)
        await mock.stop()
        let after = await mock.get("/auth/keys")
        XCTAssertEqual(after.status.code, 503)
        XCTAssertEqual(after.text, "503 Service Unavailable\n")
        await mock.stop()
    }

    func testInMemoryStop_EndsAfterTheGrace_AbandoningANotificationWhoseReceiverNeverAnswers() async throws {
        let receiver = RecordingTransport(blocking: true)
        let mock = try inMemoryMock {
            $0.scenario.teams[0].notificationURL = "https://backend.example/apple"
            $0.notificationTransport = receiver
            $0.notificationShutdownGrace = 0.2
        }
        addTeardownBlock { receiver.release() }
        _ = try mock.domain.nativeSignIn(userID: "alice", clientID: "com.example.app", scopes: ["email"], nonce: nil, hideEmail: nil)
        let fired = await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(fired.status.code, 202)
        try await receiver.waitForFirstPost()

        let started = ContinuousClock.now
        await mock.stop()
        XCTAssertGreaterThanOrEqual(started.duration(to: .now), .milliseconds(200), "the grace was given")
        let record = try XCTUnwrap(mock.notifications.records().first)
        XCTAssertEqual(record.outcome, .abandoned)

        // The held attempt still ends, and is recorded without changing the outcome.
        receiver.release()
        try await eventually { mock.notifications.records().first?.attempts.isEmpty == false }
        XCTAssertEqual(mock.notifications.records().first?.attempts.map(\.error), ["released by the test"])
        XCTAssertEqual(mock.notifications.records().first?.outcome, .abandoned)
    }

    func testInMemoryStop_EndsAsSoonAsTheLastNotificationIsDelivered_NotAfterTheGrace() async throws {
        let receiver = RecordingTransport(delay: 0.2)
        let mock = try inMemoryMock {
            $0.scenario.teams[0].notificationURL = "https://backend.example/apple"
            $0.notificationTransport = receiver
            $0.notificationShutdownGrace = 60
        }
        _ = try mock.domain.nativeSignIn(userID: "alice", clientID: "com.example.app", scopes: ["email"], nonce: nil, hideEmail: nil)
        let fired = await mock.postJSON("/__mock/events", #"{"type":"consent-revoked","user":"alice","client_id":"com.example.app"}"#)
        XCTAssertEqual(fired.status.code, 202)
        // Stops while the notification is queued or on its way: the stop waits for it, then ends
        // (a fixed wait would take the whole minute).
        let started = ContinuousClock.now
        await mock.stop()
        XCTAssertLessThan(started.duration(to: .now), .seconds(30))
        XCTAssertEqual(mock.notifications.records().map(\.outcome), [.delivered])
        XCTAssertEqual(receiver.posts.count, 1)
    }
}

/// Reads a notification JWT's event.
private enum PendingNotificationEvent {
    /// The `type` of the event in `token`'s `events` claim (a JSON string, as Apple sends it).
    static func type(of token: CompactJWS) -> String? {
        guard case .string(let events)? = token.payloadJSON?["events"],
              case .object(let event)? = try? JSONParser.parse(Array(events.utf8)) else { return nil }
        return event["type"]?.stringValue
    }
}

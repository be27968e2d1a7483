import AppleIDMock
import JOSE
import XCTest

/// `GET /__mock/events`: the feed of everything that changed, in order, long-polled, in memory
/// (issue 20 item 3); the server's stop answering long polls, live.
final class EventFeedTests: XCTestCase {
    private func feed(_ mock: any MockClient, _ query: String = "") async throws -> (events: [JSONObject], last: Int64?, missed: Int64?) {
        let response = try await mock.get("/__mock/events" + query)
        XCTAssertEqual(response.status, 200, response.text)
        let object = try jsonObject(response.body)
        return (object["events"]?.arrayValue?.compactMap(\.objectValue) ?? [], object["last"]?.intValue, object["missed"]?.intValue)
    }

    func testFeed_ListsASignInAndAnExchange_InOrder_WithTheirFields() async throws {
        let mock = try frozenClient()
        var eventCount = try await feed(mock).events.count
        XCTAssertEqual(eventCount, 0, "nothing happened yet")
        let fields = try await mock.headlessAuthorize()
        let code = try XCTUnwrap(fields["code"])
        let exchanged = try await mock.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try await mock.secret()),
                                                           ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", webRedirect)])
        XCTAssertEqual(exchanged.status, 200, exchanged.text)
        let (events, last, missed) = try await feed(mock)
        XCTAssertEqual(events.map { $0["type"]?.stringValue }, ["consent-granted", "code-issued", "code-redeemed", "tokens-issued"])
        XCTAssertEqual(events.map { $0["sequence"]?.intValue }, [1, 2, 3, 4])
        XCTAssertEqual(last, 4)
        XCTAssertEqual(missed, 0)
        XCTAssertEqual(events[0]["user"], "alice")
        XCTAssertEqual(events[0]["scopes"], .array(["email", "name"]))
        XCTAssertEqual(events[1]["code"], .string(code))
        XCTAssertEqual(events[2]["code"], .string(code))
        XCTAssertEqual(events[3]["grant_type"], "authorization_code")
        XCTAssertEqual(events[0]["at"], .int(frozenNow))
        XCTAssertEqual(events[0]["time"], .string(String(RFC3339.format(frozenNow).dropLast()) + ".000Z"))
        // after= and type= select; the twin: a filter that matches nothing lists nothing.
        let types = try await feed(mock, "?after=2").events.map { $0["type"]?.stringValue }
        XCTAssertEqual(types, ["code-redeemed", "tokens-issued"])
        var sequences = try await feed(mock, "?type=code-issued,code-redeemed").events.map { $0["sequence"]?.intValue }
        XCTAssertEqual(sequences, [2, 3])
        eventCount = try await feed(mock, "?type=reset").events.count
        XCTAssertEqual(eventCount, 0)
        sequences = try await feed(mock, "?limit=1").events.map { $0["sequence"]?.intValue }
        XCTAssertEqual(sequences, [1])
    }

    func testFeed_Wait_ReturnsAsSoonAsAnEventLands() async throws {
        let mock = try frozenClient()
        let poll = Task { try await mock.get("/__mock/events?after=0&wait=60&type=code-issued") }
        // Until the reader sleeps in the mock: only then does an event have to wake it.
        try await untilFeedReadersWait(mock)
        _ = try await mock.headlessAuthorize()
        let response = try await poll.value
        XCTAssertEqual(response.status, 200)
        let events = try XCTUnwrap(try jsonObject(response.body)["events"]?.arrayValue)
        XCTAssertEqual(events.compactMap { $0.objectValue?["type"]?.stringValue }, ["code-issued"], "woken by the event, not by the time")
    }

    // Live: the server's stop, with two long polls parked on its sockets.
    func testStop_AnswersLongPollsAtOnce_RatherThanHoldingTheShutdownForThem() async throws {
        let mock = try liveFrozenClient()
        let events = Task { try await mock.get("/__mock/events?wait=60") }
        let notifications = Task { try await mock.get("/__mock/notifications?wait=60") }
        try await untilFeedReadersWait(mock, notificationReaders: 1)
        await mock.stop()
        // Answered, with what there was — not cut off after the shutdown grace without an answer.
        let eventsAnswer = try await events.value
        let notificationsAnswer = try await notifications.value
        XCTAssertEqual(eventsAnswer.text, #"{"events":[],"last":0,"missed":0}"#)
        XCTAssertEqual(notificationsAnswer.text, #"{"notifications":[]}"#)
    }

    func testFeed_ReaderFarBehind_GetsWhatIsKeptAndHowManyItMissed() async throws {
        let mock = try frozenClient()
        try await advanceClockInProcess(mock, by: 1, times: eventLogCapacity + 5)
        let (events, _, missed) = try await feed(mock, "?limit=2")
        XCTAssertEqual(missed, 5)
        XCTAssertEqual(events.map { $0["sequence"]?.intValue }, [6, 7])
        // The twin: a reader that kept up misses nothing.
        let keptUp = try await feed(mock, "?after=10000").missed
        XCTAssertEqual(keptUp, 0)
    }

    func testFeed_RefusesBadParameters_NamingTheField() async throws {
        let mock = try frozenClient()
        for (query, field) in [("?after=-1", "after"), ("?after=x", "after"), ("?wait=61", "wait"), ("?wait=nan", "wait"),
                               ("?type=code-issued,nope", "type"), ("?type=", "type"), ("?limit=0", "limit"), ("?limit=1001", "limit"),
                               ("?since=1", "since")] {
            let response = try await mock.get("/__mock/events" + query)
            XCTAssertEqual(response.status, 400, query)
            XCTAssertEqual(try jsonObject(response.body)["field"], .string(field), query)
        }
    }
}

@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTPTesting
import XCTest

/// `GET /__mock/events`: the feed of everything that changed, in order, long-polled, over a live
/// server on port 0 with raw sockets (issue 20 item 3).
final class EventFeedTests: XCTestCase {
    private func feed(_ server: AppleIDMockServer, _ query: String = "") throws -> (events: [JSONObject], last: Int64?, missed: Int64?) {
        let response = try server.get("/__mock/events" + query)
        XCTAssertEqual(response.status, 200, response.text)
        let object = try jsonObject(response.body)
        return (object["events"]?.arrayValue?.compactMap(\.objectValue) ?? [], object["last"]?.intValue, object["missed"]?.intValue)
    }

    func testFeed_ListsASignInAndAnExchange_InOrder_WithTheirFields() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        XCTAssertEqual(try feed(server).events.count, 0, "nothing happened yet")
        let code = try XCTUnwrap(try server.headlessAuthorize()["code"])
        let exchanged = try server.postForm("/auth/token", [("client_id", "com.example.web"), ("client_secret", try server.secret()),
                                                           ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", webRedirect)])
        XCTAssertEqual(exchanged.status, 200, exchanged.text)
        let (events, last, missed) = try feed(server)
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
        XCTAssertEqual(try feed(server, "?after=2").events.map { $0["type"]?.stringValue }, ["code-redeemed", "tokens-issued"])
        XCTAssertEqual(try feed(server, "?type=code-issued,code-redeemed").events.map { $0["sequence"]?.intValue }, [2, 3])
        XCTAssertEqual(try feed(server, "?type=reset").events.count, 0)
        XCTAssertEqual(try feed(server, "?limit=1").events.map { $0["sequence"]?.intValue }, [1])
    }

    func testFeed_Wait_ReturnsAsSoonAsAnEventLands() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        let answered = expectation(description: "the long poll answered")
        nonisolated(unsafe) var result: RawHTTPResponse?
        DispatchQueue.global().async {
            result = try? server.get("/__mock/events?after=0&wait=60&type=code-issued")
            answered.fulfill()
        }
        // Until the reader sleeps in the mock: only then does an event have to wake it.
        while server.domain.state.waitingReaders == 0 { usleep(2_000) }
        _ = try server.headlessAuthorize()
        wait(for: [answered], timeout: 120)
        let response = try XCTUnwrap(result)
        XCTAssertEqual(response.status, 200)
        let events = try XCTUnwrap(try jsonObject(response.body)["events"]?.arrayValue)
        XCTAssertEqual(events.compactMap { $0.objectValue?["type"]?.stringValue }, ["code-issued"], "woken by the event, not by the time")
    }

    func testStop_AnswersLongPollsAtOnce_RatherThanHoldingTheShutdownForThem() throws {
        let server = try startFrozenMock()
        let answered = expectation(description: "both long polls answered")
        answered.expectedFulfillmentCount = 2
        nonisolated(unsafe) var results: [String: RawHTTPResponse] = [:]
        let lock = NSLock()
        for path in ["/__mock/events?wait=60", "/__mock/notifications?wait=60"] {
            DispatchQueue.global().async {
                let response = try? server.get(path)
                lock.withLock { results[path] = response }
                answered.fulfill()
            }
        }
        while server.domain.state.waitingReaders == 0 || server.notifications.waitingReaders == 0 { usleep(2_000) }
        server.stop()
        wait(for: [answered], timeout: 120)
        // Answered, with what there was — not cut off after the shutdown grace without an answer.
        XCTAssertEqual(lock.withLock { results["/__mock/events?wait=60"] }?.text, #"{"events":[],"last":0,"missed":0}"#)
        XCTAssertEqual(lock.withLock { results["/__mock/notifications?wait=60"] }?.text, #"{"notifications":[]}"#)
    }

    func testFeed_ReaderFarBehind_GetsWhatIsKeptAndHowManyItMissed() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        for _ in 0..<(MockState.eventCapacity + 5) { try server.domain.clock.advance(by: 1) }
        let (events, _, missed) = try feed(server, "?limit=2")
        XCTAssertEqual(missed, 5)
        XCTAssertEqual(events.map { $0["sequence"]?.intValue }, [6, 7])
        // The twin: a reader that kept up misses nothing.
        XCTAssertEqual(try feed(server, "?after=10000").missed, 0)
    }

    func testFeed_RefusesBadParameters_NamingTheField() throws {
        let server = try startFrozenMock()
        defer { server.stop() }
        for (query, field) in [("?after=-1", "after"), ("?after=x", "after"), ("?wait=61", "wait"), ("?wait=nan", "wait"),
                               ("?type=code-issued,nope", "type"), ("?type=", "type"), ("?limit=0", "limit"), ("?limit=1001", "limit"),
                               ("?since=1", "since")] {
            let response = try server.get("/__mock/events" + query)
            XCTAssertEqual(response.status, 400, query)
            XCTAssertEqual(try jsonObject(response.body)["field"], .string(field), query)
        }
    }
}

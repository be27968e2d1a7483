@testable import AppleIDMock
import JOSE
import MiniHTTP
import XCTest

/// Reading the request journal (probe P4): filters decide on what each record keeps of itself
/// (its keys) exactly as they decide on the decoded entry; only matches are decoded; a page stops
/// at 4 MiB of records; a count decodes nothing; a long poll looks only at what came since its
/// last look.
final class JournalReadTests: XCTestCase {
    /// A journal over the built-in scenario's routes.
    private func journal(capacity: Int = 10_000) throws -> RequestJournal {
        let journal = RequestJournal(capacity: capacity, realTime: { 1_700_000_000 })
        journal.attach(try routeTable())
        return journal
    }

    /// Keeps one exchange: `method target` with `headers` and `body`, answered `status`.
    private func keep(_ journal: RequestJournal, _ method: HTTPMethod, _ target: String, headers: HTTPHeaders = HTTPHeaders(),
                      body: String = "", status: Int = 200) {
        journal.observe(HTTPExchange(id: 0, request: HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8)),
                                     status: HTTPStatus(status)))
    }

    private let form: HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
    private let json: HTTPHeaders = ["Content-Type": "application/json"]

    /// A journal holding one of every shape a filter tells apart.
    private func mixed() throws -> RequestJournal {
        let journal = try journal()
        keep(journal, .post, "/auth/token", headers: form, body: "client_id=com.example.app&grant_type=authorization_code&code=c1")
        keep(journal, .post, "/auth/token", headers: form, body: "grant_type=refresh_token&client_id=com.example.web", status: 400)
        keep(journal, .post, "/auth/token", headers: form, body: "client_id=%ZZ&grant_type=x")
        keep(journal, .post, "/auth/token?client_id=from.query", headers: form, body: "grant_type=client_credentials")
        keep(journal, .post, "/auth/token", headers: form, body: "client%5Fid=escaped.name&grant%5Ftype=escaped")
        keep(journal, .get, "/auth/authorize?client_id=com.example.web&response_type=code")
        keep(journal, .post, "/__mock/sign-in", headers: json, body: #"{"user":"alice","client_id":"com.example.app"}"#)
        keep(journal, .post, "/__mock/sign-in", headers: json, body: #"  {"client\u005fid":"json.escaped"}"#)
        keep(journal, .post, "/__mock/sign-in", headers: form, body: #"{"client_id":"json.as.form"}"#)
        keep(journal, .delete, "/__mock/keys/W2ek7HdPaL", status: 409)
        keep(journal, .get, "/__mock/dashboard")
        keep(journal, .get, "/__mock/events?wait=5", headers: [DashboardSnapshot.ownRequestHeader: "poll"])
        keep(journal, .get, "/nowhere", status: 404)
        journal.observe(HTTPExchange(id: 0, request: nil, status: HTTPStatus(400), reason: .timedOut))
        return journal
    }

    func testFilters_DecideOnTheKeysAsOnTheDecodedEntry() throws {
        let journal = try mixed()
        let all = journal.entries(matching: RequestFilter()).entries
        XCTAssertEqual(all.count, 14)
        var filters: [RequestFilter] = [
            RequestFilter(), RequestFilter(method: .post), RequestFilter(method: .patch), RequestFilter(path: "/auth/token"),
            RequestFilter(path: "/__mock/keys/{kid}"), RequestFilter(path: "/__mock/keys/W2ek7HdPaL"), RequestFilter(path: "/__mock/keys"),
            RequestFilter(clientID: "com.example.app"), RequestFilter(clientID: "from.query"), RequestFilter(clientID: "escaped.name"),
            RequestFilter(clientID: "json.escaped"), RequestFilter(clientID: "json.as.form"), RequestFilter(clientID: "com.example.web"),
            RequestFilter(grantType: "refresh_token"), RequestFilter(grantType: "escaped"), RequestFilter(grantType: "x"),
            RequestFilter(status: .code(400)), RequestFilter(status: .statusClass(4)), RequestFilter(status: .statusClass(2)),
            RequestFilter(control: true), RequestFilter(control: false), RequestFilter(after: 5), RequestFilter(method: .post, clientID: "com.example.app", after: 0),
        ]
        var dashboard = RequestFilter()
        dashboard.leavesOutDashboard = true
        filters.append(dashboard)
        for filter in filters {
            let expected = all.filter(filter.matches).map(\.id)
            XCTAssertEqual(journal.entries(matching: filter).entries.map(\.id), expected, "\(filter)")
            XCTAssertEqual(journal.count(matching: filter), expected.count, "\(filter)")
            XCTAssertEqual(journal.newest(matching: filter, limit: 100, scanLimit: 100).entries.map(\.id), expected.reversed(), "\(filter)")
        }
        // What the keys say is what the entries show.
        XCTAssertEqual(all.map(\.clientID), ["com.example.app", "com.example.web", nil, "from.query", "escaped.name", "com.example.web", "com.example.app",
                                             "json.escaped", nil, nil, nil, nil, nil, nil])
        XCTAssertEqual(all.map(\.grantType), ["authorization_code", "refresh_token", nil, "client_credentials", "escaped", nil, nil, nil, nil, nil, nil,
                                              nil, nil, nil])
        XCTAssertEqual(all[9].route, "/__mock/keys/{kid}")
        XCTAssertNil(all[12].route)
    }

    /// Forms of about 23 KB, as the probe posted them (601 fields kept of each).
    private func heavy(_ journal: RequestJournal, count: Int) {
        let body = (0..<3000).map { "a\($0)=b" }.joined(separator: "&")
        for _ in 0..<count { keep(journal, .post, "/auth/token", headers: form, body: body, status: 400) }
    }

    func testAPage_StopsAtItsByteLimit_AndTheNextPageGoesOnFromItsLast() throws {
        let journal = try journal()
        heavy(journal, count: 300)
        let limit = 256 * 1024
        let first = journal.entries(matching: RequestFilter(), limit: 1000, byteLimit: limit).entries
        XCTAssertGreaterThan(first.count, 1)
        XCTAssertLessThan(first.count, 300)
        var rest = RequestFilter()
        rest.after = try XCTUnwrap(first.last?.id)
        let second = journal.entries(matching: rest, limit: 1000, byteLimit: limit).entries
        XCTAssertEqual(second.first?.id, rest.after + 1)
        // The twin: with no byte limit one page takes all 300.
        XCTAssertEqual(journal.entries(matching: RequestFilter(), limit: 1000).entries.count, 300)
        // A single record larger than the limit still makes a page of one.
        XCTAssertEqual(journal.entries(matching: RequestFilter(), limit: 1000, byteLimit: 1).entries.count, 1)
    }

    func testALongPoll_LooksOnlyAtWhatCameSinceItsLastLook() async throws {
        let journal = try journal()
        heavy(journal, count: 500)
        let before = journal.examined
        let poll = Task { await journal.awaitEntries(matching: RequestFilter(path: "/nomatch"), limit: 10, seconds: 30) }
        let parked = try await eventually { journal.waitingReaders != 0 }
        XCTAssertTrue(parked, "the poll never parked")
        for round in 0..<20 {
            keep(journal, .get, "/auth/keys")
            // Each request wakes the poll, which looks at the new entry alone.
            let held = try await eventually { journal.examined >= before + 500 + round + 1 }
            XCTAssertTrue(held, "the poll never looked at request \(round)")
        }
        let parkedAgain = try await eventually { journal.waitingReaders != 0 }
        XCTAssertTrue(parkedAgain, "the poll never parked")
        XCTAssertEqual(journal.examined - before, 520, "500 at the first look, then one per request")
        // The twin: a matching entry ends the poll with it.
        keep(journal, .get, "/nomatch", status: 404)
        let page = await poll.value
        XCTAssertEqual(page.entries.map(\.path), ["/nomatch"])
        XCTAssertEqual(page.missed, 0)
    }
}

@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
import Synchronization
import XCTest

/// With `--state`, a restart rebuilds every projection from the record alone (issue 36): the
/// faults installed at run time, and the notification log from the state's events and the
/// delivery events; the file holds no notification table of its own, and a version 1 file's
/// notification rows are taken over as events.
final class DurableRecordTests: XCTestCase {
    /// Every path a test made, removed (with `-wal` and `-shm`) in `tearDown`.
    private var madePaths: [String] = []

    override func tearDown() {
        for path in madePaths {
            for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        madePaths = []
        super.tearDown()
    }

    private func newPath(_ name: String = "durable") -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).sqlite").path
        madePaths.append(path)
        return path
    }

    /// The state file at `path` and its WAL copied to a new path while the mock runs: the bytes
    /// a mock killed at that moment leaves behind.
    private func killedCopy(_ path: String) throws -> String {
        let copy = newPath("killed")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        if FileManager.default.fileExists(atPath: path + "-wal") { try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal") }
        return copy
    }

    /// The built-in scenario frozen at `frozenNow`, its first team's notifications going to `transport`.
    private func mock(_ path: String?, transport: RecordingTransport = RecordingTransport(status: 200),
                      _ adjust: (inout AppleIDMockConfiguration) -> Void = { _ in }) throws -> InMemoryMock {
        let mock = try inMemoryMock { configuration in
            configuration.scenario.clock = .init(start: frozenNow, frozen: true)
            configuration.scenario.teams[0].notificationURL = "https://backend.example/apple"
            configuration.notificationTransport = transport
            configuration.statePath = path
            configuration.notificationShutdownGrace = 0
            adjust(&configuration)
        }
        addTeardownBlock { await mock.stop() }
        return mock
    }

    private func tokenRequest(_ mock: InMemoryMock, code: String) async throws -> HTTPResponse {
        let form = HTTPForm.encode([("client_id", "com.example.app"), ("client_secret", try mock.clientSecret(clientID: "com.example.app")),
                                   ("grant_type", "authorization_code"), ("code", code)])
        return await mock.respond(.post, "/auth/token", headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Array(form.utf8))
    }

    // MARK: - Faults

    func testRuntimeFault_SurvivesAKilledMock_AndFiresAfterTheRestart() async throws {
        let path = newPath()
        let first = try mock(path)
        let id = try await first.installFault(try .http(.post, "/auth/token", .respond(status: 503, body: "still down"), times: 2))
        let signIn = try await first.signInNative(user: "alice", clientID: "com.example.app")
        let faultedStatus = try await tokenRequest(first, code: signIn.authorizationCode).status.code
        XCTAssertEqual(faultedStatus, 503)
        // What a client is told (the control API answers once what it shows is committed).
        let listed = await first.get("/__mock/faults").text
        XCTAssertEqual(first.faults.map(\.id), [id])
        XCTAssertEqual(first.faults.first?.fired, 1)
        let killed = try killedCopy(path)

        let second = try mock(killed)
        let listedAfter = await second.get("/__mock/faults").text
        XCTAssertEqual(listedAfter, listed, "the fault as it stood: fired once, once left")
        XCTAssertEqual(second.faults, first.faults)
        let fired = try await tokenRequest(second, code: signIn.authorizationCode)
        XCTAssertEqual(fired.status.code, 503)
        XCTAssertEqual(fired.text, "still down")
        // Spent now: the code (never seen by the endpoint) redeems.
        let redeemedStatus = try await tokenRequest(second, code: signIn.authorizationCode).status.code
        XCTAssertEqual(redeemedStatus, 200)
        // The twin: a mock without the state file has no fault.
        let forgetful = try mock(nil)
        XCTAssertEqual(forgetful.faults, [])
    }

    func testFaultAnswer_IsSentOnlyOnceItsFiringIsCommitted() async throws {
        // A fault's own answer (respond, close, reset) says it fired: with a state file it must
        // wait for its fault-fired event's commit like every other answer, or a kill -9 right
        // after it lets a `times` fault fire once more than the client saw it allowed.
        var configuration = AppleIDMockConfiguration()
        configuration.keysDirectory = repositoryRoot + "/Keys/signing"
        configuration.scenario.clock = .init(start: frozenNow, frozen: true)
        configuration.log = { _ in }
        // Durable: answers wait for commits; the test plays the writer.
        let domain = try AppleIDDomain(configuration: configuration, durable: true)
        let barrier = domain.events.barrier
        let routes = Routes.table(domain: domain, site: SiteAddress(), control: ControlGuard(allowedHosts: [], token: nil),
                                  requests: RequestLog(level: .error, sink: { _ in }, committing: barrier))
        _ = try domain.installFaults([try FaultSpec(json: JSONParser.parse(#"{"path":"/auth/revoke","action":"respond","status":503,"times":1}"#))])
        barrier.markCommitted(upTo: barrier.counted)
        let committed = barrier.counted
        let request = HTTPRequest(method: .post, target: "/auth/revoke", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                                  body: Array("client_id=com.example.web&token=x".utf8))
        let answered = Atomic<Bool>(false)
        let answer = Task {
            let response = await routes.respond(to: request)
            answered.store(true, ordering: .releasing)
            return response
        }
        try await eventually { barrier.counted != committed }
        XCTAssertEqual(barrier.counted, committed + 1, "the firing is recorded")
        for _ in 0..<20 { try await Task.sleep(for: .milliseconds(2)) }
        XCTAssertFalse(answered.load(ordering: .acquiring), "the fault answered before its firing was committed")
        barrier.markCommitted(upTo: barrier.counted)
        let response = await answer.value
        XCTAssertEqual(response.status.code, 503)
        // The twin: the fault spent, Apple's own refusal changes nothing and goes at once, nothing committed.
        XCTAssertEqual(domain.faults.first?.remaining, 0)
        let refused = await routes.respond(to: request)
        XCTAssertEqual(refused.status.code, 400)
        XCTAssertEqual(barrier.counted, committed + 1)
    }

    func testRemovedFault_StaysRemovedAcrossARestart_AndAResetPutsTheScenariosBack() async throws {
        let path = newPath()
        let scenarioFault = try FaultSpec(json: JSONParser.parse(#"{"path":"/auth/keys","action":"respond","status":429}"#))
        let first = try mock(path) { $0.scenario.faults = [scenarioFault] }
        try await first.installFault(try .notifications(type: .consentRevoked, .drop))
        XCTAssertEqual(first.faults.map(\.id), ["f1", "f2"])
        let removed = try await first.removeFaults()
        XCTAssertEqual(removed, 2)
        await first.stop()

        let second = try mock(path) { $0.scenario.faults = [scenarioFault] }
        XCTAssertEqual(second.faults, [], "a removal is an event too: the scenario's fault is not put back by a restart")
        let keysStatus = await second.get("/auth/keys").status.code
        XCTAssertEqual(keysStatus, 200)
        try await second.reset()
        XCTAssertEqual(second.faults.map(\.spec), [scenarioFault], "the twin: a reset puts it back")
        await second.stop()
        let third = try mock(path) { $0.scenario.faults = [scenarioFault] }
        XCTAssertEqual(third.faults.map(\.spec), [scenarioFault])
        let keysAgainStatus = await third.get("/auth/keys").status.code
        XCTAssertEqual(keysAgainStatus, 429)
    }

    // MARK: - The notification log

    /// A record as the log shows it: every field but when its next attempt is due (real time,
    /// scheduling only; a restart makes what is pending due at once).
    private func shown(_ records: some Sequence<NotificationRecord>) -> [String] {
        records.map { record in
            "\(record.id) \(record.type) \(record.userID) \(record.sequence) \(record.url ?? "-") \(record.jwt ?? "unsigned") "
                + "\(record.attempts) \(record.outcome) \(record.fault ?? "-") \(record.keyID ?? "-") \(record.unsigned?.count ?? 0)"
        }
    }

    /// Notifications with every kind of ending: delivered (twice, after a refusal once), dropped
    /// by a fault, sent to no URL (the second team), and a log cleared of its oldest.
    private func driveNotifications(_ mock: InMemoryMock) async throws -> [NotificationRecord] {
        _ = try await mock.signInNative(user: "alice", clientID: "com.example.app")
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        try await mock.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        _ = await mock.notificationLog(after: 0, waitingUpTo: .seconds(10))
        mock.notifications.clear()
        try await mock.installFault(try .notifications(type: .emailEnabled, .drop, times: 1))
        try await mock.fireEvent(.emailEnabled, user: "bob", clientID: "com.example.app")
        try await mock.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        try await mock.fireEvent(.consentRevoked, user: "alice", clientID: "com.example.app")
        var records = await mock.notificationLog(after: 0, waitingUpTo: .seconds(10))
        try await eventually {
            records = mock.notifications.records()
            return records.count >= 3 && !records.contains(where: { !$0.isSettled })
        }
        XCTAssertEqual(records.map(\.id), [2, 3, 4])
        XCTAssertEqual(records.map(\.outcome), [.dropped, .delivered, .delivered])
        return records
    }

    func testNotificationLog_AfterARestart_IsTheOneBefore_RebuiltFromTheRecordAlone() async throws {
        let path = newPath()
        let first = try mock(path)
        let before = try await driveNotifications(first)
        let listed = await first.get("/__mock/notifications").text
        await first.stop()

        // The file holds one sequence of events, the delivery events among them, and no table of records.
        let database = try SQLiteDatabase(path: path, create: false)
        let tables = try database.texts("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        let kinds = try database.texts("SELECT DISTINCT type FROM events WHERE notification IS NOT NULL ORDER BY 1")
        database.close()
        XCTAssertEqual(tables, ["events", "meta"])
        XCTAssertEqual(kinds, ["notification-attempted", "notifications-cleared"])
        // The log the record rebuilds, with no mock running: the one the mock showed.
        let file = try StateFile(path: path, scenarioJSON: nil, readOnly: true)
        let stored = try XCTUnwrap(file.stored)
        file.close()
        var rebuilt = NotificationLog(capacity: NotificationDeliverer.logCapacity)
        rebuilt.forgottenThrough = stored.forgottenThrough
        NotificationDeliverer.rebuild(&rebuilt, events: stored.events, now: 0, scenario: first.domain.scenario, issuer: first.domain.issuer)
        XCTAssertEqual(shown(rebuilt.live), shown(before))

        let second = try mock(path)
        XCTAssertEqual(shown(second.notifications.records()), shown(before))
        let listedAfter = await second.get("/__mock/notifications").text
        XCTAssertEqual(listedAfter, listed)
        // The twin: the record without its delivery events rebuilds another log (every record pending, the cleared one back).
        var eventsOnly = NotificationLog(capacity: NotificationDeliverer.logCapacity)
        NotificationDeliverer.rebuild(&eventsOnly, events: stored.events.filter { !$0.isDelivery }, now: 0, scenario: first.domain.scenario,
                                      issuer: first.domain.issuer)
        XCTAssertEqual(eventsOnly.live.map(\.id), [1, 2, 3, 4])
        XCTAssertNotEqual(shown(eventsOnly.live), shown(before))
    }

    /// Turns the version 3 file at `path` into the version 2 file it would have been: its delivery
    /// events in their own table and sequence, each with the last state event before it as its
    /// cursor, and the state events numbered in their own sequence.
    private func downgradeToVersion2(_ path: String) throws {
        let database = try SQLiteDatabase(path: path, create: false)
        try database.execute("""
            CREATE TEMP TABLE renumbered AS
              SELECT sequence AS old, row_number() OVER (ORDER BY sequence) AS new FROM events WHERE notification IS NULL;
            CREATE TABLE deliveries(sequence INTEGER PRIMARY KEY, cursor INTEGER NOT NULL, id INTEGER NOT NULL, body TEXT NOT NULL);
            CREATE INDEX deliveries_id ON deliveries(id);
            INSERT INTO deliveries(sequence, cursor, id, body)
              SELECT row_number() OVER (ORDER BY sequence),
                     coalesce((SELECT max(new) FROM temp.renumbered WHERE old < events.sequence), 0), notification, body
              FROM events WHERE notification IS NOT NULL;
            DELETE FROM events WHERE notification IS NOT NULL;
            UPDATE events SET sequence = -(SELECT new FROM temp.renumbered WHERE old = events.sequence);
            UPDATE events SET sequence = -sequence;
            DROP INDEX events_notification;
            ALTER TABLE events DROP COLUMN notification;
            PRAGMA user_version=2;
            """)
        database.close()
    }

    func testVersion2StateFile_DeliveryEvents_AreMergedIntoTheOneSequence() async throws {
        let path = newPath("v2")
        let first = try mock(path)
        let before = try await driveNotifications(first)
        let listed = await first.get("/__mock/notifications").text
        let feedBefore = first.domain.events.events().events
        await first.stop()
        try downgradeToVersion2(path)
        let v2 = try SQLiteDatabase(path: path, create: false)
        let deliveries = try XCTUnwrap(try v2.integer("SELECT count(*) FROM deliveries"))
        let events = try XCTUnwrap(try v2.integer("SELECT count(*) FROM events"))
        XCTAssertGreaterThan(deliveries, 0)
        v2.close()

        let second = try mock(path)
        let feed = second.domain.events.events().events
        XCTAssertEqual(shown(second.notifications.records()), shown(before), "the version 2 log, rebuilt from the one sequence")
        let listedAfter = await second.get("/__mock/notifications").text
        XCTAssertEqual(listedAfter, listed)
        XCTAssertEqual(feed.count, Int(events + deliveries))
        XCTAssertEqual(feed.map(\.sequence), Array(1...UInt64(feed.count)), "one sequence")
        XCTAssertEqual(feed.map(\.sequence), feedBefore.map(\.sequence), "the version 3 file's own numbering, back")
        XCTAssertEqual(feed.map(\.event), feedBefore.map(\.event))
        await second.stop()
        let migrated = try SQLiteDatabase(path: path, create: false)
        XCTAssertEqual(try migrated.integer("PRAGMA user_version"), StateFile.schemaVersion)
        XCTAssertEqual(try migrated.texts("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"), ["events", "meta"])
        XCTAssertEqual(try migrated.integer("SELECT count(*) FROM events WHERE notification IS NOT NULL"), deliveries)
        migrated.close()
        let third = try mock(path)
        XCTAssertEqual(shown(third.notifications.records()), shown(before), "restarted from the migrated file: the same log")
        await third.stop()
        // The twin: a version 2 delivery whose cursor is past the last event is refused at start, naming it.
        let broken = newPath("v2-broken")
        let made = try mock(broken)
        _ = try await driveNotifications(made)
        await made.stop()
        try downgradeToVersion2(broken)
        let patch = try SQLiteDatabase(path: broken, create: false)
        try patch.execute("UPDATE deliveries SET cursor = (SELECT max(sequence) FROM events) + 1 WHERE sequence = (SELECT max(sequence) FROM deliveries)")
        patch.close()
        XCTAssertThrowsError(try mock(broken)) { error in
            guard case .state(let refusal)? = error as? AppleIDMockError, case .damaged(let why) = refusal.problem else { return XCTFail("\(error)") }
            XCTAssertTrue(why.hasSuffix("sequence and cursor out of order or range"), why)
        }
    }

    func testVersion1StateFile_NotificationRows_BecomeImportedDeliveryEvents() async throws {
        // A version 1 file, made from a version 3 one in SQLite: its log as rows of records.
        let path = newPath("v1")
        let first = try mock(path)
        let before = try await driveNotifications(first)
        await first.stop()
        let database = try SQLiteDatabase(path: path, create: false)
        try database.execute("""
            DELETE FROM events WHERE notification IS NOT NULL;
            DROP INDEX events_notification;
            ALTER TABLE events DROP COLUMN notification;
            """)
        let last = try XCTUnwrap(try database.integer("SELECT max(sequence) FROM events"))
        try database.execute("""
            DELETE FROM meta WHERE key = 'deliveries_forgotten';
            CREATE TABLE notifications(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            INSERT INTO meta(key, value) VALUES('notifications', '{"cursor":\(last),"next_id":\(before.count + 2)}');
            PRAGMA user_version=1;
            """)
        do {
            // The statement goes before the database closes.
            let insert = try database.prepare("INSERT INTO notifications(id, body) VALUES(?1, ?2)")
            for record in before { try insert.run(.integer(Int64(record.id)), .text(String(decoding: JSONWriter.compact(record.stored), as: UTF8.self))) }
        }
        database.close()
        let v1 = try SQLiteDatabase(path: path, create: false)
        XCTAssertEqual(try v1.integer("PRAGMA user_version"), 1)
        XCTAssertEqual(try v1.texts("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"), ["events", "meta", "notifications"])
        v1.close()

        let second = try mock(path)
        XCTAssertEqual(shown(second.notifications.records()), shown(before), "the version 1 log, taken over")
        await second.stop()
        let migrated = try SQLiteDatabase(path: path, create: false)
        XCTAssertEqual(try migrated.integer("PRAGMA user_version"), StateFile.schemaVersion)
        XCTAssertEqual(try migrated.texts("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"), ["events", "meta"])
        XCTAssertEqual(try migrated.texts("SELECT type FROM events WHERE notification IS NOT NULL ORDER BY sequence"),
                       Array(repeating: "notification-imported", count: before.count))
        XCTAssertEqual(try migrated.texts("SELECT key FROM meta WHERE key = 'notifications'"), [])
        migrated.close()
        // Restarted once more, from the migrated file: the same log.
        let third = try mock(path)
        XCTAssertEqual(shown(third.notifications.records()), shown(before))
        // The twin: a version 1 row the codec refuses is refused at start, naming it.
        await third.stop()
        let broken = newPath("v1-broken")
        let made = try mock(broken)
        _ = try await driveNotifications(made)
        await made.stop()
        let patch = try SQLiteDatabase(path: broken, create: false)
        try patch.execute("""
            DELETE FROM events WHERE notification IS NOT NULL;
            DROP INDEX events_notification;
            ALTER TABLE events DROP COLUMN notification;
            CREATE TABLE notifications(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            INSERT INTO notifications(id, body) VALUES(1, '{"id":1}');
            PRAGMA user_version=1;
            """)
        patch.close()
        XCTAssertThrowsError(try mock(broken)) { error in
            guard case .state(let refusal)? = error as? AppleIDMockError, case .damaged(let why) = refusal.problem else { return XCTFail("\(error)") }
            XCTAssertTrue(why.hasPrefix("notification 1: "), why)
        }
    }
}

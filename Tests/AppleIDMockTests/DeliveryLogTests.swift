@testable import AppleIDMock
import Dispatch
import Foundation
import JOSE
import MiniHTTP
import MiniHTTPTesting
import XCTest

/// The delivery log's structure (probe findings N3 and N6): an event finds its own notification
/// among concurrent ones; pending records are taken by due time without scanning the log; the
/// log keeps the newest records and finds them by id or sequence after older ones left.
final class DeliveryLogTests: XCTestCase {
    func testDueQueue_GivesEntriesInDueOrder_OlderFirstAmongEquals() {
        var queue = DueQueue()
        for (due, id) in [(5.0, 1), (1.0, 2), (3.0, 3), (1.0, 4), (9.0, 5), (0.5, 6)] as [(Double, UInt64)] {
            queue.insert(dueAt: due, id: id)
        }
        var order: [UInt64] = []
        while let next = queue.removeFirst() { order.append(next.id) }
        XCTAssertEqual(order, [6, 2, 4, 3, 1, 5])
        // The twin: nothing comes out of an empty queue.
        XCTAssertNil(queue.removeFirst())
        XCTAssertNil(queue.first)
    }

    func testEventsRoute_AnswersEachConcurrentEventWithItsOwnNotification() throws {
        let server = try startMock { configuration in
            configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
        }
        defer { server.stop() }
        // Eight clients, each toggling relay forwarding of its own user 150 times (the probe's
        // load: 317 of 1,200 answers named another request's notification).
        let users = (0..<8).map { "user-\($0)" }
        for user in users {
            XCTAssertEqual(try server.client().roundTrip("POST", "/__mock/users", headers: [("Content-Type", "application/json")],
                                                         body: Array(#"{"id":"\#(user)","email":"\#(user)@example.com"}"#.utf8)).status, 201)
            XCTAssertEqual(try server.nativeSignIn(user: user, hideEmail: true).status, 200)
        }
        let answers = LockedAnswers()
        DispatchQueue.concurrentPerform(iterations: users.count) { index in
            guard let client = try? server.client() else { return }
            for round in 0..<150 {
                let type = round.isMultiple(of: 2) ? "email-disabled" : "email-enabled"
                let body = #"{"type":"\#(type)","user":"\#(users[index])","client_id":"com.example.app"}"#
                let answer = try? client.roundTrip("POST", "/__mock/events", headers: [("Content-Type", "application/json")], body: Array(body.utf8))
                answers.add(users[index], answer.flatMap { try? JSONParser.parse($0.body).objectValue?["notification"]?.intValue }.map(UInt64.init))
            }
        }
        let log = Dictionary(uniqueKeysWithValues: server.notifications.records().map { ($0.id, $0) })
        var seen = Set<UInt64>()
        var wrong = 0
        for user in users {
            let ids = answers.get(user)
            XCTAssertEqual(ids.count, 150, user)
            for id in ids {
                guard let id else { XCTFail("\(user) got no notification id"); continue }
                if log[id]?.userID != user { wrong += 1 }
                XCTAssertTrue(seen.insert(id).inserted, "notification \(id) was handed out twice")
            }
        }
        XCTAssertEqual(wrong, 0, "answers naming another request's notification")
    }

    func testAccountEvent_NamesItsOwnNotification_WhenAnotherLandsBeforeItsCallerLooks() throws {
        let server = try AppleIDMockServer.startForTesting(keysDirectory: repositoryRoot + "/Keys/signing")
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "alice", hideEmail: true).status, 200)
        XCTAssertEqual(try server.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        let before = server.notifications.lastID
        let alices = try server.domain.accountEvent(.emailDisabled, user: "alice", clientID: "com.example.app")
        // Another request's event lands before alice's caller reads the log.
        let bobs = try server.domain.accountEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        server.notifications.collect()
        XCTAssertEqual(alices.count, 1)
        XCTAssertEqual(bobs.count, 1)
        XCTAssertEqual(server.notifications.record(sequence: alices[0])?.userID, "alice")
        XCTAssertEqual(server.notifications.record(sequence: bobs[0])?.userID, "bob")
        // The twin: what diffing the log (the old way) would have answered alice with.
        XCTAssertEqual(server.notifications.records(after: before).last?.userID, "bob")
    }

    func testLog_KeepsTheNewestRecords_AndFindsThemByIdAndSequence_AfterOlderOnesLeft() throws {
        // No URL: each record settles at once (no_url), so the oldest leave first.
        let server = try AppleIDMockServer.startForTesting(keysDirectory: repositoryRoot + "/Keys/signing")
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        let total = NotificationDeliverer.logCapacity + 1_500
        var sequences: [UInt64] = []
        for index in 0..<total {
            let queued = try server.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled,
                                                              user: "bob", clientID: "com.example.app")
            server.notifications.collect()
            XCTAssertEqual(queued.count, 1)
            sequences += queued
        }
        let records = server.notifications.records()
        XCTAssertEqual(records.count, NotificationDeliverer.logCapacity)
        XCTAssertEqual(records.map(\.id), Array(UInt64(total - NotificationDeliverer.logCapacity + 1)...UInt64(total)))
        XCTAssertEqual(server.notifications.lastID, UInt64(total))
        XCTAssertEqual(server.notifications.records(after: UInt64(total - 3)).map(\.id), [UInt64(total - 2), UInt64(total - 1), UInt64(total)])
        XCTAssertEqual(server.notifications.record(sequence: sequences[total - 1])?.id, UInt64(total))
        XCTAssertEqual(server.notifications.record(sequence: sequences[total - NotificationDeliverer.logCapacity])?.id,
                       UInt64(total - NotificationDeliverer.logCapacity + 1))
        // The twins: a record that left the log, and one never made, are not found.
        XCTAssertNil(server.notifications.record(sequence: sequences[0]))
        XCTAssertNil(server.notifications.record(sequence: sequences[total - 1] + 1))
        XCTAssertTrue(server.notifications.records(after: UInt64(total)).isEmpty)
    }
    /// A mock whose notifications go to a port nothing listens on (each attempt refused at
    /// once), retried after `delays`.
    private func unreachableMock(delays: [Int] = [3600]) throws -> AppleIDMockServer {
        try AppleIDMockServer.startForTesting(keysDirectory: repositoryRoot + "/Keys/signing", configure: { configuration in
            configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
            configuration.scenario.compatibility.notificationRetryDelays = delays
        })
    }

    /// Waits (bounded, no timing asserted) until `condition` holds.
    private func eventually(_ condition: () -> Bool) async throws {
        for _ in 0..<2_000 where !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }

    func testReset_AbandonsTheNotificationsQueuedBeforeIt_AndLaterOnesGoOn() async throws {
        let server = try unreachableMock()
        addTeardownBlock { await server.stop() }
        _ = try await server.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let fired = try await server.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        let before = try XCTUnwrap(fired)
        // Its first attempt is refused; the retry is an hour away: still pending.
        try await eventually { server.notifications.records(after: before - 1).first?.attempts.count == 1 }
        XCTAssertEqual(server.notifications.records(after: before - 1).first?.outcome, .pending)
        try await server.reset()
        XCTAssertEqual(server.notifications.records(after: before - 1).first?.outcome, .abandoned)
        // The twin: a notification queued after the reset is delivered as usual (attempted).
        _ = try await server.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let firedAfter = try await server.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        let after = try XCTUnwrap(firedAfter)
        try await eventually { server.notifications.records(after: after - 1).first?.attempts.count == 1 }
        XCTAssertEqual(server.notifications.records(after: after - 1).first?.outcome, .pending)
        XCTAssertEqual(server.notifications.records(after: before - 1).first?.attempts.count, 1, "no attempt after the reset")
    }

    func testResetRoute_AbandonsQueuedNotifications_AndDeleteCancelsPendingOnes() throws {
        let server = try startMock { configuration in
            configuration.scenario.teams[0].notificationURL = "http://127.0.0.1:9/apple"
            configuration.scenario.compatibility.notificationRetryDelays = [3600]
        }
        defer { server.stop() }
        let json = [("Content-Type", "application/json")]
        func fire() throws -> UInt64 {
            XCTAssertEqual(try server.nativeSignIn(user: "bob", hideEmail: true).status, 200)
            let answer = try server.client().roundTrip("POST", "/__mock/events", headers: json,
                                                       body: Array(#"{"type":"email-disabled","user":"bob","client_id":"com.example.app"}"#.utf8))
            return UInt64(try XCTUnwrap(try JSONParser.parse(answer.body).objectValue?["notification"]?.intValue))
        }
        let first = try fire()
        XCTAssertEqual(try server.client().roundTrip("POST", "/__mock/reset").status, 200)
        XCTAssertEqual(server.notifications.records(after: first - 1).first?.outcome, .abandoned)
        // DELETE keeps pending records unless told to cancel them.
        let second = try fire()
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/notifications").status, 200)
        XCTAssertEqual(server.notifications.records().map(\.id), [second])
        for (query, field) in [("?pending=later", "pending"), ("?cancel=1", "cancel")] {
            let refused = try server.client().roundTrip("DELETE", "/__mock/notifications" + query)
            XCTAssertEqual(refused.status, 400, query)
            XCTAssertEqual(try JSONParser.parse(refused.body).objectValue?["field"]?.stringValue, field, query)
        }
        XCTAssertEqual(server.notifications.records().map(\.id), [second])
        XCTAssertEqual(try server.client().roundTrip("DELETE", "/__mock/notifications?pending=cancel").status, 200)
        XCTAssertTrue(server.notifications.records().isEmpty)
    }

    func testLog_StaysBounded_WhenEveryRecordIsUndelivered_CountingWhatItPushedOut() throws {
        let server = try unreachableMock()
        defer { server.stop() }
        XCTAssertEqual(try server.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        let total = NotificationDeliverer.logCapacity + 50
        for index in 0..<total {
            _ = try server.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            server.notifications.collect()
        }
        let records = server.notifications.records()
        XCTAssertEqual(records.count, NotificationDeliverer.logCapacity)
        XCTAssertEqual(records.first?.id, 51)
        XCTAssertEqual(server.notifications.droppedUndelivered, 50)
    }

    func testLog_FreesTheRecordsItDrops_AndTheirQueueEntries_WhenTheReceiverNeverAnswers_P5() throws {
        // Probe P5: a log of undelivered records stayed at 10,000 listed, but kept every record
        // it had ever had in memory (30 -> 67 MB over 80,000 events) for as long as the receiver was silent.
        let receiver = RecordingTransport(blocking: true)
        let server = try startFrozenMock { configuration in
            configuration.scenario.teams[0].notificationURL = "http://silent.test/apple"
            configuration.notificationTransport = receiver
        }
        defer {
            receiver.release()
            server.stop()
        }
        XCTAssertEqual(try server.nativeSignIn(user: "bob", hideEmail: true).status, 200)
        let capacity = NotificationDeliverer.logCapacity
        for index in 0..<(3 * capacity) {
            try server.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
        }
        server.notifications.collect()
        let retained = server.notifications.retained
        XCTAssertLessThan(retained.records, capacity + NotificationLog.compactionBatch, "the records that left are freed")
        XCTAssertLessThanOrEqual(retained.dueEntries, 2 * capacity + 1, "their entries in the due queue too")
        // The twin: the newest 10,000 are listed and findable, the rest counted as pushed out undelivered.
        let records = server.notifications.records()
        XCTAssertEqual(records.count, capacity)
        XCTAssertEqual(records.first?.id, UInt64(2 * capacity + 1))
        XCTAssertTrue(records.allSatisfy { $0.outcome == .pending })
        XCTAssertEqual(server.notifications.droppedUndelivered, 2 * capacity)
        XCTAssertEqual(server.notifications.record(sequence: records[capacity / 2].sequence)?.id, records[capacity / 2].id)
    }

    func testDueQueue_Rebuilt_GivesTheSameOrder() {
        var queue = DueQueue()
        let entries: [(dueAt: Double, id: UInt64)] = (0..<500).map { (Double(($0 * 7919) % 97), UInt64($0)) }
        queue.rebuild(entries)
        var popped: [(dueAt: Double, id: UInt64)] = []
        while let entry = queue.removeFirst() { popped.append(entry) }
        let expected = entries.sorted { $0.dueAt < $1.dueAt || ($0.dueAt == $1.dueAt && $0.id < $1.id) }
        XCTAssertEqual(popped.map(\.id), expected.map(\.id))
        // The twin: built one insert at a time, the same order.
        var inserted = DueQueue()
        for entry in entries { inserted.insert(dueAt: entry.dueAt, id: entry.id) }
        var again: [UInt64] = []
        while let entry = inserted.removeFirst() { again.append(entry.id) }
        XCTAssertEqual(again, expected.map(\.id))
    }

    func testAwait_SleepsUntilARecordSettles_AndLeavesNoWaiterBehind() async throws {
        let server = try AppleIDMockServer.startForTesting(keysDirectory: repositoryRoot + "/Keys/signing")
        addTeardownBlock { await server.stop() }
        _ = try await server.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let waiting = Task { await server.notificationLog(after: 0, waitingUpTo: .seconds(30)) }
        for _ in 0..<2_000 where server.notifications.waitingReaders == 0 { try await Task.sleep(nanoseconds: 5_000_000) }
        XCTAssertEqual(server.notifications.waitingReaders, 1, "the reader sleeps instead of polling")
        // No URL in the built-in scenario: the record settles at once (no_url) and wakes it.
        _ = try await server.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        let records = await waiting.value
        XCTAssertEqual(records.first?.outcome, .noURL)
        XCTAssertEqual(server.notifications.waitingReaders, 0)
        // The twin: a reader whose time runs out leaves no waiter behind either.
        let nothing = await server.notificationLog(after: records.last?.id ?? 0, waitingUpTo: .milliseconds(50))
        XCTAssertTrue(nothing.isEmpty)
        XCTAssertEqual(server.notifications.waitingReaders, 0)
    }
}

/// Notification ids per user, added from several threads.
private final class LockedAnswers: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [String: [UInt64?]] = [:]

    func add(_ user: String, _ id: UInt64?) { lock.withLock { values[user, default: []].append(id) } }

    func get(_ user: String) -> [UInt64?] { lock.withLock { values[user] ?? [] } }
}

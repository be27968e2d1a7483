@testable import AppleIDMock
import Foundation
import JOSE
import MiniHTTP
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

    /// The mock in memory whose notifications go to `transport` (a receiver answering 200 unless
    /// told otherwise), retried after `delays`.
    private func notifyingMock(_ transport: RecordingTransport = RecordingTransport(status: 200), delays: [Int] = [3600],
                               url: String? = "https://backend.example/apple") throws -> InMemoryMock {
        let mock = try inMemoryMock { configuration in
            configuration.scenario.teams[0].notificationURL = url
            configuration.scenario.compatibility.notificationRetryDelays = delays
            configuration.notificationTransport = transport
        }
        addTeardownBlock { await mock.stop() }
        return mock
    }

    /// A mock whose receiver refuses every notification (503): each stays pending after its first
    /// attempt, retried an hour later.
    private func refusingMock() throws -> InMemoryMock {
        try notifyingMock(RecordingTransport(status: 503))
    }

    /// `POST /__mock/events` for `user` of `type`: the notification id it answers.
    private static func postEvent(_ mock: InMemoryMock, _ type: String, user: String) async -> UInt64? {
        let answer = await mock.postJSON("/__mock/events", #"{"type":"\#(type)","user":"\#(user)","client_id":"com.example.app"}"#)
        return (try? JSONParser.parse(answer.body).objectValue?["notification"]?.intValue).flatMap { $0 }.map(UInt64.init)
    }

    func testEventsRoute_AnswersEachConcurrentEventWithItsOwnNotification() async throws {
        let mock = try notifyingMock(url: nil)
        // Eight clients, each toggling relay forwarding of its own user 150 times (the probe's
        // load: 317 of 1,200 answers named another request's notification).
        let users = (0..<8).map { "user-\($0)" }
        for user in users {
            let added = await mock.postJSON("/__mock/users", #"{"id":"\#(user)","email":"\#(user)@example.com"}"#)
            XCTAssertEqual(added.status.code, 201)
            _ = try await mock.signInNative(user: user, clientID: "com.example.app", hideEmail: true)
        }
        let answers = await withTaskGroup(of: (String, [UInt64?]).self) { group in
            for user in users {
                group.addTask {
                    var ids: [UInt64?] = []
                    for round in 0..<150 { ids.append(await Self.postEvent(mock, round.isMultiple(of: 2) ? "email-disabled" : "email-enabled", user: user)) }
                    return (user, ids)
                }
            }
            return await group.reduce(into: [String: [UInt64?]]()) { $0[$1.0] = $1.1 }
        }
        let log = Dictionary(uniqueKeysWithValues: mock.notifications.records().map { ($0.id, $0) })
        var seen = Set<UInt64>()
        var wrong = 0
        for user in users {
            let ids = answers[user] ?? []
            XCTAssertEqual(ids.count, 150, user)
            for id in ids {
                guard let id else { XCTFail("\(user) got no notification id"); continue }
                if log[id]?.userID != user { wrong += 1 }
                XCTAssertTrue(seen.insert(id).inserted, "notification \(id) was handed out twice")
            }
        }
        XCTAssertEqual(wrong, 0, "answers naming another request's notification")
    }

    func testAccountEvent_NamesItsOwnNotification_WhenAnotherLandsBeforeItsCallerLooks() async throws {
        let mock = try notifyingMock(url: nil)
        _ = try await mock.signInNative(user: "alice", clientID: "com.example.app", hideEmail: true)
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let before = mock.notifications.lastID
        let alices = try mock.domain.accountEvent(.emailDisabled, user: "alice", clientID: "com.example.app")
        // Another request's event lands before alice's caller reads the log.
        let bobs = try mock.domain.accountEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        mock.notifications.collect()
        XCTAssertEqual(alices.count, 1)
        XCTAssertEqual(bobs.count, 1)
        XCTAssertEqual(mock.notifications.record(sequence: alices[0])?.userID, "alice")
        XCTAssertEqual(mock.notifications.record(sequence: bobs[0])?.userID, "bob")
        // The twin: what diffing the log (the old way) would have answered alice with.
        XCTAssertEqual(mock.notifications.records(after: before).last?.userID, "bob")
    }

    func testLog_KeepsTheNewestRecords_AndFindsThemByIdAndSequence_AfterOlderOnesLeft() async throws {
        // No URL: each record settles at once (no_url), so the oldest leave first.
        let mock = try notifyingMock(url: nil)
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let total = NotificationDeliverer.logCapacity + 1_500
        var sequences: [UInt64] = []
        for index in 0..<total {
            let queued = try mock.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            mock.notifications.collect()
            XCTAssertEqual(queued.count, 1)
            sequences += queued
        }
        let notifications = mock.notifications
        let records = notifications.records()
        XCTAssertEqual(records.count, NotificationDeliverer.logCapacity)
        XCTAssertEqual(records.map(\.id), Array(UInt64(total - NotificationDeliverer.logCapacity + 1)...UInt64(total)))
        XCTAssertEqual(notifications.lastID, UInt64(total))
        XCTAssertEqual(notifications.records(after: UInt64(total - 3)).map(\.id), [UInt64(total - 2), UInt64(total - 1), UInt64(total)])
        XCTAssertEqual(notifications.record(sequence: sequences[total - 1])?.id, UInt64(total))
        XCTAssertEqual(notifications.record(sequence: sequences[total - NotificationDeliverer.logCapacity])?.id,
                       UInt64(total - NotificationDeliverer.logCapacity + 1))
        // The twins: a record that left the log, and one never made, are not found.
        XCTAssertNil(notifications.record(sequence: sequences[0]))
        XCTAssertNil(notifications.record(sequence: sequences[total - 1] + 1))
        XCTAssertTrue(notifications.records(after: UInt64(total)).isEmpty)
    }

    func testReset_AbandonsTheNotificationsQueuedBeforeIt_AndLaterOnesGoOn() async throws {
        let mock = try refusingMock()
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let fired = try await mock.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        let before = try XCTUnwrap(fired)
        // Its first attempt is refused; the retry is an hour away: still pending.
        try await eventually { mock.notifications.records(after: before - 1).first?.attempts.count == 1 }
        XCTAssertEqual(mock.notifications.records(after: before - 1).first?.outcome, .pending)
        try await mock.reset()
        XCTAssertEqual(mock.notifications.records(after: before - 1).first?.outcome, .abandoned)
        // The twin: a notification queued after the reset is delivered as usual (attempted).
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let firedAfter = try await mock.fireEvent(.emailDisabled, user: "bob", clientID: "com.example.app")
        let after = try XCTUnwrap(firedAfter)
        try await eventually { mock.notifications.records(after: after - 1).first?.attempts.count == 1 }
        XCTAssertEqual(mock.notifications.records(after: after - 1).first?.outcome, .pending)
        XCTAssertEqual(mock.notifications.records(after: before - 1).first?.attempts.count, 1, "no attempt after the reset")
    }

    func testResetRoute_AbandonsQueuedNotifications_AndDeleteCancelsPendingOnes() async throws {
        let mock = try refusingMock()
        func fire() async throws -> UInt64 {
            _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
            let id = await Self.postEvent(mock, "email-disabled", user: "bob")
            return try XCTUnwrap(id)
        }
        let first = try await fire()
        let reset = await mock.postJSON("/__mock/reset", "{}")
        XCTAssertEqual(reset.status.code, 200)
        XCTAssertEqual(mock.notifications.records(after: first - 1).first?.outcome, .abandoned)
        // DELETE keeps pending records unless told to cancel them.
        let second = try await fire()
        let deleted = await mock.respond(.delete, "/__mock/notifications")
        XCTAssertEqual(deleted.status.code, 200)
        XCTAssertEqual(mock.notifications.records().map(\.id), [second])
        for (query, field) in [("?pending=later", "pending"), ("?cancel=1", "cancel")] {
            let refused = await mock.respond(.delete, "/__mock/notifications" + query)
            XCTAssertEqual(refused.status.code, 400, query)
            XCTAssertEqual(try JSONParser.parse(refused.body).objectValue?["field"]?.stringValue, field, query)
        }
        XCTAssertEqual(mock.notifications.records().map(\.id), [second])
        let cancelled = await mock.respond(.delete, "/__mock/notifications?pending=cancel")
        XCTAssertEqual(cancelled.status.code, 200)
        XCTAssertTrue(mock.notifications.records().isEmpty)
    }

    func testAtScale_Log_StaysBounded_WhenEveryRecordIsUndelivered_CountingWhatItPushedOut() async throws {
        let mock = try refusingMock()
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let total = NotificationDeliverer.logCapacity + 50
        for index in 0..<total {
            _ = try mock.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
            mock.notifications.collect()
        }
        let records = mock.notifications.records()
        XCTAssertEqual(records.count, NotificationDeliverer.logCapacity)
        XCTAssertEqual(records.first?.id, 51)
        XCTAssertEqual(mock.notifications.droppedUndelivered, 50)
    }

    func testAtScale_Log_FreesTheRecordsItDrops_AndTheirQueueEntries_WhenTheReceiverNeverAnswers_P5() async throws {
        // Probe P5: a log of undelivered records stayed at 10,000 listed, but kept every record
        // it had ever had in memory (30 -> 67 MB over 80,000 events) for as long as the receiver was silent.
        let receiver = RecordingTransport(blocking: true)
        let mock = try notifyingMock(receiver)
        // Teardown blocks run last first: the receiver lets go before the mock stops.
        addTeardownBlock { receiver.release() }
        _ = try await mock.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let capacity = NotificationDeliverer.logCapacity
        for index in 0..<(3 * capacity) {
            try mock.domain.accountEvent(index.isMultiple(of: 2) ? .emailDisabled : .emailEnabled, user: "bob", clientID: "com.example.app")
        }
        mock.notifications.collect()
        let retained = mock.notifications.retained
        XCTAssertLessThan(retained.records, capacity + NotificationLog.compactionBatch, "the records that left are freed")
        XCTAssertLessThanOrEqual(retained.dueEntries, 2 * capacity + 1, "their entries in the due queue too")
        // The twin: the newest 10,000 are listed and findable, the rest counted as pushed out undelivered.
        let records = mock.notifications.records()
        XCTAssertEqual(records.count, capacity)
        XCTAssertEqual(records.first?.id, UInt64(2 * capacity + 1))
        XCTAssertTrue(records.allSatisfy { $0.outcome == .pending })
        XCTAssertEqual(mock.notifications.droppedUndelivered, 2 * capacity)
        XCTAssertEqual(mock.notifications.record(sequence: records[capacity / 2].sequence)?.id, records[capacity / 2].id)
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
        let server = try notifyingMock(url: nil)
        _ = try await server.signInNative(user: "bob", clientID: "com.example.app", hideEmail: true)
        let waiting = Task { await server.notificationLog(after: 0, waitingUpTo: .seconds(30)) }
        try await eventually { server.notifications.waitingReaders != 0 }
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

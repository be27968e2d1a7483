@testable import AppleIDMock
import JOSE
import XCTest

/// Delivery attempts are events (issue 36): their state-file codec round-trips every case and
/// refuses tampered twins with the exact path; and the notification log is a projection — the
/// state's account events and the delivery events, applied in order, make its records.
final class DeliveryRecordTests: XCTestCase {
    // MARK: - Factories

    private static let url = "https://backend.example/apple"

    /// An account event of `type` for `user` in the built-in scenario's first app group.
    private func accountEvent(_ type: AccountEventType = .consentRevoked, user: String = "alice") -> AccountEventRecord {
        AccountEventRecord(type: type, userID: user, teamID: "MOCKTEAM01", groupID: "com.example.app", subject: teamSub(user),
                           eventTime: frozenNow * 1000, at: frozenNow, email: nil, notificationID: "jti-\(user)", signingKeyID: "W2ek7HdPaL",
                           timelineIndex: nil)
    }

    /// The scenario whose first team has a notification URL.
    private var scenario: Scenario {
        var scenario = Scenario.default
        scenario.teams[0].notificationURL = Self.url
        return scenario
    }

    /// `event` recorded as state event `sequence`.
    private func recorded(_ sequence: UInt64, _ event: DomainEvent) -> RecordedEvent {
        RecordedEvent(sequence: sequence, at: Double(frozenNow), event: event)
    }

    /// `log` after taking up state event `recorded` at real time 100, under `scenario` (by default, one whose group has a URL).
    private func apply(_ log: inout NotificationLog, _ recorded: RecordedEvent, scenario: Scenario? = nil) {
        let scenario = scenario ?? self.scenario
        _ = log.apply(recorded, now: 100) { NotificationDeliverer.notification(for: $0, sequence: $1, scenario: scenario, issuer: "https://appleid.apple.com") }
    }

    private func attempt(_ status: Int?, at: Double = 1_700_000_001, error: String? = nil) -> NotificationRecord.Attempt {
        NotificationRecord.Attempt(at: at, status: status, error: error)
    }

    // MARK: - Codec

    /// `event` stored, written as text, parsed and read back.
    private func roundTrip(_ event: DeliveryEvent, file: StaticString = #filePath, line: UInt = #line) throws -> DeliveryEvent {
        let stored = event.stored
        let parsed = try JSONParser.parse(JSONWriter.pretty(stored))
        XCTAssertEqual(parsed, stored, "the text reads back to the same JSON", file: file, line: line)
        return try DeliveryEvent(stored: parsed, path: "delivery")
    }

    /// A record as the deliverer made it, then signed and attempted (for `notification-imported`).
    private func record() -> NotificationRecord {
        var log = NotificationLog(capacity: 10)
        apply(&log, recorded(7, .accountEvent(accountEvent())))
        _ = log.apply(.attempted(id: 1, attempt: attempt(503), jwt: "h.p.s", outcome: .pending, dueAt: 1_700_000_060), now: 100)
        return log.live.first!
    }

    func testDeliveryEvent_RoundTripsExactly_ForEveryCase() throws {
        let events: [DeliveryEvent] = [
            .attempted(id: 1, attempt: attempt(200), jwt: "h.p.s", outcome: .delivered, dueAt: nil),
            .attempted(id: 2, attempt: attempt(nil, error: "connection refused"), jwt: nil, outcome: .pending, dueAt: 1_700_000_060.5),
            .attempted(id: 9_007_199_254_740_991, attempt: attempt(500, at: 0), jwt: nil, outcome: .failed, dueAt: nil),
            .cleared(through: 12, cancelPending: false),
            .cleared(through: 0, cancelPending: true),
            .imported(record()),
        ]
        XCTAssertEqual(Set(events.map(\.name)), ["notification-attempted", "notifications-cleared", "notification-imported"], "a sample of every case")
        for event in events { XCTAssertEqual(try roundTrip(event), event, event.name) }
        XCTAssertEqual(String(decoding: JSONWriter.compact(events[0].stored), as: UTF8.self),
                       #"{"type":"notification-attempted","id":1,"attempt":{"at":1700000001.0,"status":200,"error":null},"jwt":"h.p.s","outcome":"delivered","due_at":null}"#)
    }

    /// Fails unless reading `value` throws exactly `path: message`.
    private func assertRefused(_ value: JSONValue, _ path: String, _ message: String, file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrows(try DeliveryEvent(stored: value, path: "delivery"), file: file, line: line)
        XCTAssertEqual(error as? StoredStateError, StoredStateError(path: path, message: message), file: file, line: line)
    }

    /// `value` with its member `key` replaced by `replacement` (removed when nil).
    private func tampered(_ value: JSONValue, _ key: String, _ replacement: JSONValue?) -> JSONValue {
        guard case .object(var object) = value else { return value }
        object[key] = replacement
        return .object(object)
    }

    func testDeliveryEvent_TamperedTwins_AreRefusedNamingThePath() throws {
        let attempted = DeliveryEvent.attempted(id: 1, attempt: attempt(200), jwt: nil, outcome: .delivered, dueAt: nil).stored
        XCTAssertNoThrow(try DeliveryEvent(stored: attempted, path: "delivery"))
        assertRefused(tampered(attempted, "type", "notification-lost"), "delivery.type",
                      "unknown delivery event \"notification-lost\" (expected notification-attempted, notifications-cleared or notification-imported)")
        assertRefused(tampered(attempted, "id", 0), "delivery.id", "expected an integer from 1 to 9007199254740991")
        assertRefused(tampered(attempted, "outcome", "lost"), "delivery.outcome",
                      "expected " + NotificationRecord.Outcome.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or "))
        assertRefused(tampered(attempted, "due_at", .double(1e308)), "delivery.due_at", "expected a number from 0 to 4326589695 or null")
        assertRefused(tampered(attempted, "extra", true), "delivery.extra", "unknown key")
        let cleared = DeliveryEvent.cleared(through: 3, cancelPending: false).stored
        XCTAssertNoThrow(try DeliveryEvent(stored: cleared, path: "delivery"))
        assertRefused(tampered(cleared, "cancel_pending", "yes"), "delivery.cancel_pending", "expected true or false")
    }

    // MARK: - The log as a projection

    func testLog_AnAccountEvent_QueuesItsRecord_AndAnAttemptSettlesIt() {
        var log = NotificationLog(capacity: 10)
        apply(&log, recorded(3, .accountEvent(accountEvent())))
        apply(&log, recorded(4, .codesExpired(at: frozenNow, count: 1)))
        XCTAssertEqual(log.live.map(\.id), [1], "only an account event makes a record")
        XCTAssertEqual(log.live.first?.outcome, .pending)
        XCTAssertEqual(log.live.first?.sequence, 3)
        XCTAssertEqual(log.live.first?.url, Self.url)
        XCTAssertEqual(log.cursor, 4)
        // A refused attempt: pending again, due when the event says.
        _ = log.apply(.attempted(id: 1, attempt: attempt(503), jwt: "h.p.s", outcome: .pending, dueAt: 160), now: 100)
        XCTAssertEqual(log.live.first?.outcome, .pending)
        XCTAssertEqual(log.live.first?.jwt, "h.p.s")
        XCTAssertEqual(log.live.first?.dueAt, 160)
        // The twin: an answered attempt settles it, the JWT signed once.
        let change = log.apply(.attempted(id: 1, attempt: attempt(200), jwt: nil, outcome: .delivered, dueAt: nil), now: 100)
        XCTAssertTrue(change.settled)
        XCTAssertEqual(log.live.first?.outcome, .delivered)
        XCTAssertEqual(log.live.first?.attempts.map(\.status), [503, 200])
        XCTAssertEqual(log.live.first?.jwt, "h.p.s")
        // An attempt for a record the log does not hold changes nothing.
        _ = log.apply(.attempted(id: 9, attempt: attempt(200), jwt: nil, outcome: .delivered, dueAt: nil), now: 100)
        XCTAssertEqual(log.live.map(\.id), [1])
    }

    func testLog_NoURL_And_ADropFault_SettleAtOnce() {
        var log = NotificationLog(capacity: 10)
        apply(&log, recorded(1, .accountEvent(accountEvent(.emailDisabled, user: "bob"))))
        apply(&log, recorded(2, .accountEvent(accountEvent(.emailDisabled, user: "bob"))), scenario: .default)
        var dropped = accountEvent()
        dropped.notificationFault = NotificationFault(faultID: "f3", action: "drop", delayMilliseconds: 0)
        apply(&log, recorded(3, .accountEvent(dropped)))
        XCTAssertEqual(log.live.map(\.outcome), [.pending, .noURL, .dropped], "the twin first: a URL and no fault, pending")
        XCTAssertEqual(log.live.map(\.url), [Self.url, nil, Self.url])
        XCTAssertEqual(log.live.last?.fault, "f3 drop")
        XCTAssertEqual(log.live.last?.attempts, [])
    }

    func testLog_Cleared_ForgetsSettledRecords_AndWithCancelAbandonsPendingOnes() {
        var log = NotificationLog(capacity: 10)
        for sequence in UInt64(1)...3 { apply(&log, recorded(sequence, .accountEvent(accountEvent()))) }
        _ = log.apply(.attempted(id: 1, attempt: attempt(200), jwt: "a.b.c", outcome: .delivered, dueAt: nil), now: 100)
        _ = log.apply(.cleared(through: 3, cancelPending: false), now: 100)
        XCTAssertEqual(log.live.map(\.id), [2, 3], "settled records go, pending ones stay")
        // The twin: with cancel, pending ones are abandoned first, so they go too.
        _ = log.apply(.cleared(through: 2, cancelPending: true), now: 100)
        XCTAssertEqual(log.live.map(\.id), [3], "only those up to `through`")
        XCTAssertEqual(log.nextID, 4, "ids are never reused")
    }

    func testLog_AReset_AbandonsWhatIsPending_AndLaterEventsQueueAsUsual() {
        var log = NotificationLog(capacity: 10)
        apply(&log, recorded(1, .accountEvent(accountEvent())))
        let reset = ResetRecord(clock: MockClock(offset: 0, frozenAt: Double(frozenNow)), now: frozenNow, secret: Array(0..<32), firstConsentID: 1)
        apply(&log, recorded(2, .reset(reset)))
        XCTAssertEqual(log.live.map(\.outcome), [.abandoned])
        apply(&log, recorded(3, .accountEvent(accountEvent())))
        XCTAssertEqual(log.live.map(\.outcome), [.abandoned, .pending])
    }

    func testLog_AnImportedRecord_IsTakenUpWhole_AndOneInFlightIsDueNow() {
        var log = NotificationLog(capacity: 10)
        var inFlight = record()
        inFlight.dueAt = .infinity
        _ = log.apply(.imported(inFlight), now: 250)
        XCTAssertEqual(log.live.map(\.id), [1])
        XCTAssertEqual(log.live.first?.attempts, inFlight.attempts)
        XCTAssertEqual(log.nextDue, 250, "on the wire when written: due at once")
        XCTAssertEqual(log.nextID, 2)
    }

    func testRebuild_TakesUpTheOneSequenceInOrder() {
        let account = recorded(1, .accountEvent(accountEvent()))
        let reset = recorded(2, .reset(ResetRecord(clock: MockClock(offset: 0, frozenAt: nil), now: frozenNow, secret: Array(0..<32), firstConsentID: 1)))
        let attempted = DomainEvent.delivery(.attempted(id: 1, attempt: attempt(200), jwt: "a.b.c", outcome: .delivered, dueAt: nil))
        var log = NotificationLog(capacity: 10)
        NotificationDeliverer.rebuild(&log, events: [account, recorded(2, attempted), recorded(3, reset.event)], now: 100, scenario: scenario,
                                      issuer: "https://appleid.apple.com")
        XCTAssertEqual(log.live.map(\.outcome), [.delivered], "delivered before the reset, so the reset had nothing to abandon")
        // The twin: the same attempt after the reset finds the record abandoned, and keeps that.
        var late = NotificationLog(capacity: 10)
        NotificationDeliverer.rebuild(&late, events: [account, reset, recorded(3, attempted)], now: 100, scenario: scenario,
                                      issuer: "https://appleid.apple.com")
        XCTAssertEqual(late.live.map(\.outcome), [.abandoned])
        XCTAssertEqual(late.live.first?.attempts.map(\.status), [200], "the attempt is kept")
    }

    func testMerge_PutsAnOlderFilesDeliveryEventsAfterTheEventTheirCursorNames_AndMovesTheEventsAfter() {
        // A version 2 file: the attempt happened when the log had taken up event 1 only; a reset (event 2) came after.
        let events = [recorded(1, .accountEvent(accountEvent())),
                      recorded(2, .reset(ResetRecord(clock: MockClock(offset: 0, frozenAt: nil), now: frozenNow, secret: Array(0..<32), firstConsentID: 1)))]
        let event = DeliveryEvent.attempted(id: 1, attempt: attempt(200, at: 1_700_000_005), jwt: "a.b.c", outcome: .delivered, dueAt: nil)
        let early = RecordedDelivery.Merge.merged(events, [RecordedDelivery(sequence: 1, cursor: 1, event: event)])
        XCTAssertEqual(early.map(\.sequence), [1, 2, 3])
        XCTAssertEqual(early.map(\.event.name), ["account-event", "notification-attempted", "reset"])
        XCTAssertEqual(early[1].at, 1_700_000_005, "an attempt is placed at its own time")
        var log = NotificationLog(capacity: 10)
        NotificationDeliverer.rebuild(&log, events: early, now: 100, scenario: scenario, issuer: "https://appleid.apple.com")
        XCTAssertEqual(log.live.map(\.outcome), [.delivered])
        // The twin: the same attempt with the reset before it goes after the reset.
        let late = RecordedDelivery.Merge.merged(events, [RecordedDelivery(sequence: 1, cursor: 2, event: event)])
        XCTAssertEqual(late.map(\.event.name), ["account-event", "reset", "notification-attempted"])
        var lateLog = NotificationLog(capacity: 10)
        NotificationDeliverer.rebuild(&lateLog, events: late, now: 100, scenario: scenario, issuer: "https://appleid.apple.com")
        XCTAssertEqual(lateLog.live.map(\.outcome), [.abandoned])
        // Gaps (compaction's) stay; two delivery events at one cursor keep their order; an imported
        // record's sequence moves with the event that queued it.
        var queued = record()
        XCTAssertEqual(queued.sequence, 7)
        queued.outcome = .delivered
        let gapped = [recorded(3, .accountEvent(accountEvent())), recorded(7, .accountEvent(accountEvent(user: "bob"))), recorded(9, .clockChanged(clock: MockClock(offset: 0, frozenAt: nil), now: frozenNow))]
        let merged = RecordedDelivery.Merge.merged(gapped, [RecordedDelivery(sequence: 1, cursor: 3, event: .cleared(through: 0, cancelPending: false)),
                                                            RecordedDelivery(sequence: 2, cursor: 3, event: .imported(queued)),
                                                            RecordedDelivery(sequence: 3, cursor: 9, event: .cleared(through: 1, cancelPending: false))])
        XCTAssertEqual(merged.map(\.sequence), [3, 4, 5, 9, 11, 12])
        XCTAssertEqual(merged.map(\.event.name), ["account-event", "notifications-cleared", "notification-imported", "account-event", "clock-changed",
                                                  "notifications-cleared"])
        guard case .delivery(.imported(let moved)) = merged[2].event else { return XCTFail("\(merged[2])") }
        XCTAssertEqual(moved.sequence, 9, "event 7 is now event 9")
        XCTAssertEqual(merged[1].at, Double(frozenNow), "a clear takes the time of the event before it")
    }

    func testLog_ARunOfImportedRecords_StandsForTheEventsBeforeIt() {
        // A version 1 file's records at its cursor: the account event before them is not taken again.
        var imported = record()
        imported.outcome = .delivered
        var log = NotificationLog(capacity: 10)
        apply(&log, recorded(1, .accountEvent(accountEvent())))
        apply(&log, recorded(2, .delivery(.imported(imported))))
        apply(&log, recorded(3, .accountEvent(accountEvent(user: "bob"))))
        XCTAssertEqual(log.live.map(\.id), [1, 2])
        XCTAssertEqual(log.live.map(\.outcome), [.delivered, .pending], "the import, then what came after it")
        // The twin: with no import, the first account event's record stands, pending as it was made.
        var plain = NotificationLog(capacity: 10)
        apply(&plain, recorded(1, .accountEvent(accountEvent())))
        apply(&plain, recorded(3, .accountEvent(accountEvent(user: "bob"))))
        XCTAssertEqual(plain.live.map(\.outcome), [.pending, .pending])
    }
}

import Dispatch
import FoundationEssentials
import JOSE
import Synchronization

/// Delivers server-to-server notifications off the request path and off the I/O loops
/// (apple-behaviour.md §7). A subscriber of the state's events, it takes each up at its own
/// cursor into the delivery log (`NotificationLog`: an account event queues its notification, a
/// reset abandons what is pending), signs each once with the key that signed id_tokens when the
/// event happened, POSTs `{"payload": "<JWT>"}` on its own worker threads and retries with the
/// scenario's backoff on refusal, timeout or non-2xx. Every attempt is a delivery event: recorded
/// (with a state file, committed before answers that follow it) and applied to the log the same
/// way a restart applies it, so the log is a projection of the record and keeps no tracking of
/// its own.
package final class NotificationDeliverer: Sendable {
    private struct Guarded {
        var log: NotificationLog
        var running = true
        /// The mock is stopping: readers of `await` answer at once with what there is.
        var readersReleased = false
        /// Set while `stop(grace:)` waits for the deliveries to go quiet.
        var draining = false
        var inFlight = 0
    }

    /// Most records kept; the oldest settled ones go first.
    static let logCapacity = 10_000

    private let guarded: Mutex<Guarded>
    /// Readers of `await`, asleep until a record settles.
    private let settling = WakeList()
    /// A stopper in `stop(grace:)`, asleep until an attempt ends or a record settles (apart from
    /// the readers, whose list is released before the stop waits).
    private let drainList = WakeList()
    private let wakeup = DispatchSemaphore(value: 0)
    private let domain: AppleIDDomain
    private let events: EventStream
    private let scenario: Scenario
    private let issuer: String
    private let transport: any NotificationTransport
    private let retryDelays: [Int]
    private let realTime: @Sendable () -> Double
    private let log: @Sendable (String) -> Void
    /// Whether the workers were started: once, when the first notification is queued, so a mock
    /// that sends none keeps no idle threads (idle memory is a benchmark target).
    private let workersStarted = Atomic<Bool>(false)
    private let workerCount: Int
    private let startThread: @Sendable (String, @escaping @Sendable () -> Void) -> Void

    /// A deliverer of the notifications `mockState`'s events call for, as `issuer` under
    /// `scenario`, with `workers` threads started by `startThread`. With `restored` (a state
    /// file's record: its state events and delivery events), the log is first rebuilt from them.
    init(domain: AppleIDDomain, scenario: Scenario, issuer: String, transport: any NotificationTransport, retryDelays: [Int], workers: Int,
         realTime: @escaping @Sendable () -> Double, log: @escaping @Sendable (String) -> Void,
         restored: StoredState? = nil,
         startThread: @escaping @Sendable (String, @escaping @Sendable () -> Void) -> Void) {
        self.domain = domain
        events = domain.events
        self.scenario = scenario
        self.issuer = issuer
        self.transport = transport
        self.retryDelays = retryDelays
        self.realTime = realTime
        self.log = log
        self.workerCount = max(1, workers)
        self.startThread = startThread
        var rebuilt = NotificationLog(capacity: Self.logCapacity)
        if let restored {
            rebuilt.forgottenThrough = restored.forgottenThrough
            Self.rebuild(&rebuilt, events: restored.events, now: realTime(), scenario: scenario, issuer: issuer)
        }
        guarded = Mutex(Guarded(log: rebuilt))
        events.subscribe { [weak self] in self?.collect() }
        if rebuilt.nextDue != nil { startWorkers() }
    }

    /// The log a state file's record gives: its events taken up in sequence, the delivery events
    /// among them. What was pending when the mock stopped or died is due now.
    static func rebuild(_ log: inout NotificationLog, events: [RecordedEvent], now: Double, scenario: Scenario, issuer: String) {
        for recorded in events {
            _ = log.apply(recorded, now: now) { notification(for: $0, sequence: $1, scenario: scenario, issuer: issuer) }
        }
    }

    // MARK: - Log

    /// The records with an id above `after`, oldest first.
    package func records(after: UInt64 = 0) -> [NotificationRecord] {
        guarded.withLock { Array($0.log.records(after: after)) }
    }

    /// The newest record's id (0 before the first).
    var lastID: UInt64 {
        guarded.withLock { $0.log.live.last?.id ?? 0 }
    }

    /// The record of the notification an operation queued as `sequence` (the account event's),
    /// once collected and while the log keeps it.
    func record(sequence: UInt64) -> NotificationRecord? {
        guarded.withLock { $0.log.record(sequence: sequence) }
    }

    /// Records held in memory and entries of the due queue: what the log's bound bounds.
    var retained: (records: Int, dueEntries: Int) { guarded.withLock { $0.log.retained } }

    /// Undelivered notifications pushed out of a log full of undelivered ones, since start.
    var droppedUndelivered: Int { guarded.withLock { $0.log.droppedPending } }

    /// Forgets every settled record; pending ones go on, unless `cancelPending`, which first
    /// marks them abandoned (never attempted again) so they go too. A delivery event.
    func clear(cancelPending: Bool = false) {
        collect()
        let through = guarded.withLock { $0.log.nextID - 1 }
        record(.cleared(through: through, cancelPending: cancelPending))
    }

    /// Waits up to `seconds` for a record above `after` to settle; returns the records above it.
    /// A waiter sleeps until a record settles or its time is up, never polling.
    package func await(after: UInt64, seconds: Double) async -> [NotificationRecord] {
        let deadline = realTime() + seconds
        while true {
            let found = records(after: after)
            let left = deadline - realTime()
            if found.contains(where: \.isSettled) || left <= 0 || Task.isCancelled || settling.isReleased { return found }
            await settling.sleep(seconds: left) { guarded.withLock { $0.log.records(after: after).contains(where: \.isSettled) } }
        }
    }

    /// Wakes every reader asleep in `await`, and answers later ones at once: a mock that stops
    /// does not hold its shutdown for long polls.
    func releaseReaders() {
        guarded.withLock { $0.readersReleased = true }
        settling.release()
    }

    /// Readers asleep in `await` now.
    var waitingReaders: Int { settling.count }

    // MARK: - Delivery

    /// Takes up the state's events recorded since the last call, in order, whoever calls: each
    /// account event becomes a record in the log, a reset abandons the pending ones; then wakes
    /// a worker. Called by the state owner after each operation that recorded events, and by
    /// anyone who wants the log to be current now.
    func collect() {
        let now = realTime()
        let (queued, settled, missed) = guarded.withLock { guarded -> (Int, Bool, UInt64) in
            let (taken, missed) = events.events(after: guarded.log.cursor)
            var queued = 0
            var settled = false
            for recorded in taken {
                let change = guarded.log.apply(recorded, now: now) { [scenario, issuer] event, sequence in
                    Self.notification(for: event, sequence: sequence, scenario: scenario, issuer: issuer)
                }
                queued += change.queued
                settled = settled || change.settled
            }
            if missed > 0 { guarded.log.skip(to: events.lastSequence) }
            return (queued, settled, missed)
        }
        if settled { settling.wake() }
        if missed > 0 { log("notification deliverer fell \(missed) events behind: their notifications were not sent") }
        if queued > 0 { startWorkers() }
    }

    /// Records `event` through the domain, then takes it up with whatever came before it: the log
    /// applies every event in sequence, live as after a restart. Called with no lock held.
    private func record(_ event: DeliveryEvent) {
        domain.record(delivery: event)
        collect()
    }

    /// Starts the workers the first time, and wakes one.
    private func startWorkers() {
        if workersStarted.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            for index in 0..<workerCount {
                startThread("notify-\(index)") { [self] in work() }
            }
        }
        wakeup.signal()
    }

    /// The notification Apple sends for `event` (§7) as `issuer` under `scenario`: its JWT
    /// claims, compact, unsigned.
    static func notification(for event: AccountEventRecord, sequence: UInt64, scenario: Scenario, issuer: String) -> PendingNotification {
        let compatibility = scenario.compatibility
        var body = JSONObject()
        body["type"] = .string(event.type == .accountDelete ? compatibility.accountDeletionEventType : event.type.rawValue)
        body["sub"] = .string(event.subject)
        body["event_time"] = .int(event.eventTime)
        if let email = event.email {
            body["email"] = .string(email)
            // §7 [D]: "is_private_email" is the string "true" in these events.
            body["is_private_email"] = "true"
        }
        var claims = JSONObject()
        claims["iss"] = .string(issuer)
        claims["aud"] = .string(event.groupID)
        claims["iat"] = .int(event.at)
        // One real token had exp = iat + 24 h (§7 [O]).
        claims["exp"] = .int(event.at + 86_400)
        claims["jti"] = .string(event.notificationID)
        claims["events"] = compatibility.eventsClaimFormat == .string
            ? .string(String(decoding: JSONWriter.compact(.object(body)), as: UTF8.self)) : .object(body)
        let url = scenario.teams.first { $0.teamID == event.teamID }.flatMap { scenario.notificationURL(group: event.groupID, team: $0) }
        return PendingNotification(payload: JSONWriter.compact(.object(claims)), type: body["type"]?.stringValue ?? "", groupID: event.groupID,
                                   url: url, userID: event.userID, sequence: sequence, keyID: event.signingKeyID)
    }

    /// One worker: takes the earliest due notification, attempts it, records the attempt.
    private func work() {
        while true {
            let now = realTime()
            let next: NotificationRecord?? = guarded.withLock { guarded in
                guard guarded.running else { return .some(nil) }
                guard let record = guarded.log.takeDue(now: now) else { return nil }
                guarded.inFlight += 1
                return record
            }
            guard let taken = next else {
                let wait = guarded.withLock { guarded in max(0.001, min(1, (guarded.log.nextDue ?? now + 1) - now)) }
                _ = wakeup.wait(timeout: .now() + .milliseconds(Int(wait * 1000)))
                continue
            }
            guard let record = taken else { return }
            // Others may be due too: let another worker look.
            wakeup.signal()
            attempt(record)
        }
    }

    private func attempt(_ record: NotificationRecord) {
        var jwt = record.jwt
        let signing = jwt == nil
        // Signed by the key that signed when the event happened, while it is published; else by today's signer.
        if jwt == nil, let payload = record.unsigned, let key = record.keyID.flatMap(domain.publishedKey) ?? domain.signingKey {
            jwt = try? CompactJWS.signRS256(payload: payload, kid: key.keyID, key: key.privateKey).compact
        }
        // Attempts are stamped in mock time, as everything else the mock reports.
        let at = domain.preciseNow
        var result: NotificationRecord.Attempt
        if let jwt, let url = record.url {
            var body = JSONObject()
            body["payload"] = .string(jwt)
            result = transport.post(url: url, body: JSONWriter.compact(.object(body)))
            result.at = at
        } else {
            result = NotificationRecord.Attempt(at: at, status: nil, error: "no signing key is published")
        }
        let (outcome, dueAt) = guarded.withLock { guarded in
            let now = realTime()
            let (outcome, dueAt) = guarded.log.outcome(of: result, for: record.id, retryDelays: retryDelays, running: guarded.running, now: now)
            // A stop's abandonment is the log's, not the record's: the file keeps the record
            // pending, due now, so delivery resumes after a restart.
            return outcome == .abandoned ? (outcome, now) : (outcome, dueAt)
        }
        // The one attempt at this record on the wire: nothing else decides its outcome meanwhile.
        self.record(.attempted(id: record.id, attempt: result, jwt: signing ? jwt : nil, outcome: outcome == .abandoned ? .pending : outcome,
                               dueAt: dueAt))
        let draining = guarded.withLock { guarded in
            guarded.inFlight -= 1
            return guarded.draining
        }
        if outcome == .abandoned { settling.wake() }
        // A stopper waits for the attempts to end, retries included.
        if draining { drainList.wake() }
    }

    // MARK: - Stopping

    /// Stops after giving queued deliveries up to `grace` seconds; returns what was still
    /// undelivered (also marked abandoned in the log). Suspends without holding a thread: it
    /// wakes when an attempt ends or a record settles, and returns as soon as nothing due within
    /// the grace is left (no attempt on the wire, no pending record due by then), at the latest
    /// after `grace` seconds of real time, measured on the monotonic clock.
    @discardableResult
    package func stop(grace: Double) async -> [NotificationRecord] {
        collect()
        let grace = max(0, grace)
        let end = ContinuousClock.now + .milliseconds(Int64(min(grace, 86_400) * 1000))
        // Which records the grace covers: those due by then, in the log's own time.
        let dueBy = realTime() + grace
        guarded.withLock { $0.draining = true }
        wakeup.signal()
        let busy = { [self] in isBusy(dueBy: dueBy) }
        while busy() {
            let left = ContinuousClock.now.duration(to: end)
            guard left > .zero else { break }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            await drainList.sleep(seconds: seconds) { !busy() }
        }
        return stopNow()
    }


    /// Whether an attempt is on the wire or a pending record is due by `dueBy`.
    private func isBusy(dueBy: Double) -> Bool {
        guarded.withLock { $0.inFlight > 0 || $0.log.hasPending(dueBy: dueBy) }
    }

    /// Stops at once, with no grace and no waiting: every pending record is marked abandoned in
    /// the log (one on the wire finishes, and its attempt is recorded; a state file keeps them
    /// pending) and returned, the workers end, and readers waiting in `await` are woken.
    @discardableResult
    func stopNow() -> [NotificationRecord] {
        let left = guarded.withLock { guarded -> [NotificationRecord] in
            guarded.running = false
            guarded.draining = false
            return guarded.log.abandonForStop()
        }
        settling.wake()
        drainList.wake()
        for _ in 0..<workerCount { wakeup.signal() }
        return left
    }
}

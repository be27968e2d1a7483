import Dispatch
import FoundationEssentials
import JOSE
import Synchronization

/// Delivers server-to-server notifications off the request path and off the I/O loops: one of
/// the state owner's event subscribers, it derives a notification from each account event
/// (apple-reference.md §7) at its own cursor, abandons the pending ones at a reset, signs each once with the key that signs id_tokens,
/// POSTs `{"payload": "<JWT>"}` on its own worker threads, retries with the scenario's backoff
/// on refusal, timeout or non-2xx, and keeps a bounded delivery log (apple-reference.md §7).
public final class NotificationDeliverer: Sendable {
    private struct State {
        /// The log, ids (and sequence numbers) ascending; `records[start...]` are live, the
        /// prefix is dropped in batches so the oldest record leaves in O(1) amortized.
        var records: [NotificationRecord] = []
        var start = 0
        /// Pending records by due time: taking the next is O(log n), not a scan of the log.
        var due = DueQueue()
        /// Settled records by id: a full log finds its oldest in O(log n) (`settle`).
        var settled = SettledQueue()
        var nextID: UInt64 = 1
        var running = true
        /// The mock is stopping: readers of `await` answer at once with what there is.
        var readersReleased = false
        /// Set while `stop(grace:)` waits for the deliveries to go quiet: every attempt's end
        /// then wakes the waiters (a retry moved past the grace ends the wait too).
        var draining = false
        var inFlight = 0
        /// Readers of `await` waiting for a record to settle, and a stopper waiting for the
        /// deliveries to go quiet, by ticket.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        /// Undelivered notifications pushed out of a log full of undelivered ones.
        var droppedPending = 0
        /// The last event read from the state owner.
        var cursor: UInt64 = 0
        /// Records a `reorder` fault holds back until a later one has been attempted.
        var held: [UInt64] = []
        /// With a state file: records new or changed since its writer last took them, whether
        /// the log was cleared, and the cursor it last took.
        var persisting = false
        var dirty: Set<UInt64> = []
        var cleared = false
        var takenCursor: UInt64 = 0
        /// Records removed from the middle of the log (a full log drops a settled one behind
        /// an undelivered front), for the file to drop too.
        var removed: [UInt64] = []
        /// Records a stop marked abandoned: the file keeps them pending, so they go out after
        /// a restart.
        var abandonedByStop: Set<UInt64> = []

        /// The live records.
        var live: ArraySlice<NotificationRecord> { records[start...] }

        /// The index of the first live record whose `key` is above `value` (keys ascend).
        func firstIndex(above value: UInt64, _ key: (NotificationRecord) -> UInt64) -> Int {
            var low = start
            var high = records.count
            while low < high {
                let middle = low + (high - low) / 2
                if key(records[middle]) <= value { low = middle + 1 } else { high = middle }
            }
            return low
        }

        /// The index of the live record `id`.
        func index(of id: UInt64) -> Int? {
            let found = firstIndex(above: id &- 1, \.id)
            return found < records.count && records[found].id == id ? found : nil
        }

        /// Ends delivery of the pending record at `index` with `outcome`: the one way a record
        /// in the log settles, so `settled` knows every settled record.
        mutating func settle(_ index: Int, as outcome: NotificationRecord.Outcome) {
            records[index].outcome = outcome
            settled.insert(records[index].id)
        }

        /// The index of the oldest live settled record, stale entries of `settled` dropped on the way.
        mutating func oldestSettled() -> Int? {
            while let id = settled.first {
                if let found = index(of: id), records[found].isSettled { return found }
                settled.removeFirst()
            }
            return nil
        }
    }

    /// How many dropped records gather at the front before they are cut off at once.
    static let compactionBatch = 1024

    /// Most records kept; the oldest settled ones go first.
    public static let logCapacity = 10_000

    private let state = Mutex(State())
    private let wakeup = DispatchSemaphore(value: 0)
    private let mockState: MockState
    private let scenario: Scenario
    private let issuer: String
    private let transport: any NotificationTransport
    private let retryDelays: [Int]
    private let realTime: @Sendable () -> Double
    private let log: @Sendable (String) -> Void
    /// Whether the workers were started: once, when the first notification is queued, so a mock
    /// that sends none keeps no idle threads (idle memory is a benchmark target). A flag and two
    /// `let`s rather than a closure kept in a lock (probe N1: reading a closure out of a `Mutex`
    /// re-wraps it).
    private let workersStarted = Atomic<Bool>(false)
    private let workerCount: Int
    private let startThread: @Sendable (String, @escaping @Sendable () -> Void) -> Void
    /// The faults that act on delivery (drop, duplicate, delay, reorder); nil: none ever do.
    private let faults: FaultBook?
    /// How long a `reorder` fault holds a notification when no later one comes, in seconds.
    static let reorderHold = 30.0

    /// A deliverer of the notifications `mockState`'s events call for, as `issuer` under
    /// `scenario`, with `workers` threads started by `startThread`.
    init(mockState: MockState, scenario: Scenario, issuer: String, transport: any NotificationTransport, retryDelays: [Int], workers: Int,
         realTime: @escaping @Sendable () -> Double, log: @escaping @Sendable (String) -> Void, faults: FaultBook? = nil,
         startThread: @escaping @Sendable (String, @escaping @Sendable () -> Void) -> Void) {
        self.faults = faults
        self.mockState = mockState
        self.scenario = scenario
        self.issuer = issuer
        self.transport = transport
        self.retryDelays = retryDelays
        self.realTime = realTime
        self.log = log
        self.workerCount = max(1, workers)
        self.startThread = startThread
        mockState.subscribe { [weak self] in self?.collect() }
    }

    // MARK: - Log

    /// The records with an id above `after`, oldest first.
    public func records(after: UInt64 = 0) -> [NotificationRecord] {
        state.withLock { state in Array(state.records[state.firstIndex(above: after, \.id)...]) }
    }

    /// The newest record's id (0 before the first).
    public var lastID: UInt64 {
        state.withLock { $0.live.last?.id ?? 0 }
    }

    /// The record of the notification an operation queued as `sequence`
    /// (`MockState.accountEvent`'s answer), once collected and while the log keeps it.
    public func record(sequence: UInt64) -> NotificationRecord? {
        state.withLock { state in
            let found = state.firstIndex(above: sequence &- 1, \.sequence)
            return found < state.records.count && state.records[found].sequence == sequence ? state.records[found] : nil
        }
    }

    /// Forgets every settled record; pending ones go on, unless `cancelPending`, which first
    /// marks them abandoned (never attempted again) so they go too.
    public func clear(cancelPending: Bool = false) {
        if cancelPending { abandonPending() }
        state.withLock { state in
            state.records = state.live.filter { !$0.isSettled }
            state.start = 0
            state.settled.removeAll()
            if state.persisting { state.cleared = true }
        }
        mockState.noteUncommittedChange()
    }

    /// Marks every pending record abandoned: none is attempted again (one on the wire finishes,
    /// and its attempt is recorded). A reset calls it, so one test's notifications never reach
    /// the next test's receiver (probe finding N5). Returns how many.
    @discardableResult
    public func abandonPending() -> Int {
        let (count, waiters) = state.withLock { state -> (Int, [CheckedContinuation<Void, Never>]) in
            let count = Self.abandon(&state)
            return (count, count > 0 ? Self.takeWaiters(&state) : [])
        }
        for waiter in waiters { waiter.resume() }
        if count > 0 { mockState.noteUncommittedChange() }
        return count
    }

    /// Marks every pending record abandoned; returns how many.
    private static func abandon(_ state: inout State) -> Int {
        state.due.removeAll()
        var count = 0
        for index in state.live.indices where state.records[index].outcome == .pending {
            state.settle(index, as: .abandoned)
            if state.persisting { state.dirty.insert(state.records[index].id) }
            count += 1
        }
        return count
    }

    /// Waits up to `seconds` for a record above `after` to settle; returns the records above it.
    /// A waiter sleeps until a record settles or its time is up, never polling (1,000 waiters
    /// on an empty log used two thirds of a core: probe finding N6).
    public func await(after: UInt64, seconds: Double) async -> [NotificationRecord] {
        let deadline = realTime() + seconds
        while true {
            let found = records(after: after)
            let left = deadline - realTime()
            if found.contains(where: \.isSettled) || left <= 0 || Task.isCancelled || state.withLock({ $0.readersReleased }) { return found }
            // Settled since the look above, or the mock is stopping: do not sleep.
            await sleep(upTo: left) { state in
                state.readersReleased || state.records[state.firstIndex(above: after, \.id)...].contains(where: \.isSettled)
            }
        }
    }

    /// Suspends until the waiters are woken (a record settles, pending ones are abandoned, and
    /// while stopping, any attempt ends) or `seconds` pass; returns at once when `done` already
    /// holds under the lock. Holds no thread: the continuation waits in the state, and a
    /// dispatch deadline ends it at the latest.
    private func sleep(upTo seconds: Double, unless done: (State) -> Bool) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ticket = state.withLock { state -> UInt64? in
                guard !done(state) else { return nil }
                state.nextWaiter += 1
                state.waiters[state.nextWaiter] = continuation
                return state.nextWaiter
            }
            guard let ticket else { return continuation.resume() }
            DispatchQueue.global().asyncAfter(deadline: .now() + max(0.001, seconds)) { [self] in
                state.withLock { $0.waiters.removeValue(forKey: ticket) }?.resume()
            }
        }
    }

    /// Wakes every reader asleep in `await`, and answers later ones at once: a mock that stops
    /// does not hold its shutdown for long polls (nor their clients for their whole wait).
    public func releaseReaders() {
        let waiters = state.withLock { state in
            state.readersReleased = true
            return Self.takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Readers asleep in `await` now.
    var waitingReaders: Int { state.withLock { $0.waiters.count } }

    /// Every waiter, taken out of the state to be resumed outside its lock.
    private static func takeWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        guard !state.waiters.isEmpty else { return [] }
        let taken = Array(state.waiters.values)
        state.waiters.removeAll()
        return taken
    }

    // MARK: - State file

    /// Takes up the log a state file kept, before any event is collected: records, cursor and
    /// next id. Pending records keep their due time (a retry's backoff goes on); one on the
    /// wire when the mock died is due now. A log over its bound loses its oldest settled
    /// records, never a pending one. From then on, changes are kept for `takeChanges`.
    func restore(_ stored: StoredNotifications) {
        let now = realTime()
        var records = stored.records
        if records.count > Self.logCapacity {
            var excess = records.count - Self.logCapacity
            records = records.filter { record in
                guard excess > 0, record.isSettled else { return true }
                excess -= 1
                return false
            }
        }
        let pending = state.withLock { state -> Int in
            state.persisting = true
            state.records = records
            state.start = 0
            state.cursor = stored.cursor
            state.takenCursor = stored.cursor
            state.nextID = max(stored.nextID, (state.records.last?.id ?? 0) + 1)
            state.settled.rebuild(ascending: state.records.lazy.filter(\.isSettled).map(\.id))
            var pending = 0
            for index in state.records.indices where state.records[index].outcome == .pending {
                // On the wire when the mock died (due at infinity while in flight): due now.
                if !state.records[index].dueAt.isFinite { state.records[index].dueAt = now }
                state.due.insert(dueAt: state.records[index].dueAt, id: state.records[index].id)
                pending += 1
            }
            return pending
        }
        if pending > 0 { startWorkers() }
    }

    /// The log's changes since the last call, for the state file's writer; nil when none.
    /// Stopping marks pending records abandoned in memory only: the file keeps them pending,
    /// so delivery resumes after a restart.
    func takeChanges() -> NotificationChanges? {
        state.withLock { state in
            guard state.persisting, !state.dirty.isEmpty || state.cleared || state.cursor != state.takenCursor else { return nil }
            var changes = NotificationChanges(replaceAll: state.cleared, firstLiveID: state.live.first?.id ?? state.nextID,
                                              cursor: state.cursor, nextID: state.nextID)
            if state.cleared {
                changes.records = Array(state.live)
            } else {
                for id in state.dirty.sorted() { if let index = state.index(of: id) { changes.records.append(state.records[index]) } }
            }
            // A stop's abandonment is the log's, not the file's.
            for index in changes.records.indices where state.abandonedByStop.contains(changes.records[index].id) {
                changes.records[index].outcome = .pending
            }
            changes.removed = state.removed
            state.removed.removeAll()
            state.dirty.removeAll(keepingCapacity: true)
            state.cleared = false
            state.takenCursor = state.cursor
            return changes
        }
    }

    /// Keeps changes for `takeChanges` from now on (a new state file).
    func persistChanges() {
        state.withLock { $0.persisting = true }
    }

    // MARK: - Delivery

    /// Reads the events recorded since the last call: each account event becomes a record in
    /// the log (in event order, whoever calls), a reset abandons the pending ones; then wakes a
    /// worker. Called by the state owner after each operation that recorded events, and by
    /// anyone who wants the log to be current now.
    public func collect() {
        let now = realTime()
        var fired: [FaultBook.Firing] = []
        let (queued, missed, waiters, changed) = state.withLock { state in
            let (events, missed) = mockState.events(after: state.cursor)
            var queued = 0
            var settled = false
            let before = state.nextID
            for recorded in events {
                state.cursor = recorded.sequence
                switch recorded.event {
                case .accountEvent(let event):
                    let notification = Self.notification(for: event, sequence: recorded.sequence, scenario: scenario, issuer: issuer)
                    // A fault acts only on a notification that would be sent; its event is recorded
                    // once this lock is released (recording calls back here).
                    let firing = notification.url == nil ? nil : faults?.fire(notification: event.type.rawValue, clientID: event.groupID, recordingEvent: false)
                    if let firing { fired.append(firing) }
                    var record = NotificationRecord(id: state.nextID, notification: notification, outcome: notification.url == nil ? .noURL : .pending,
                                                    dueAt: now + Double(firing?.spec.delayMilliseconds ?? 0) / 1000)
                    record.fault = firing.map { "\($0.id) \($0.spec.action.name)" }
                    switch firing?.spec.action {
                    case .drop?:
                        record.outcome = .dropped
                    case .reorder?:
                        record.dueAt += Self.reorderHold
                        state.held.append(record.id)
                    default:
                        break
                    }
                    append(&state, record)
                    if firing?.spec.action == .duplicate {
                        record = NotificationRecord(id: state.nextID, notification: notification, outcome: .pending, dueAt: record.dueAt)
                        record.fault = firing.map { "\($0.id) \($0.spec.action.name)" }
                        append(&state, record)
                        queued += 1
                    }
                    if record.outcome == .pending { queued += 1 } else { settled = true }
                case .reset:
                    // One test's notifications never reach the next test's receiver (probe finding N5).
                    settled = Self.abandon(&state) > 0 || settled
                default:
                    break
                }
            }
            if missed > 0 { state.cursor = max(state.cursor, mockState.lastEventSequence) }
            // Records settled at once (no URL, abandoned) may be what a reader waits for.
            return (queued, missed, settled ? Self.takeWaiters(&state) : [], state.nextID != before || settled)
        }
        for waiter in waiters { waiter.resume() }
        // New records, and abandoned ones, are the state file's to commit before answers go.
        if changed { mockState.noteUncommittedChange() }
        for firing in fired { faults?.record(firing) }
        if missed > 0 { log("notification deliverer fell \(missed) events behind: their notifications were not sent") }
        guard queued > 0 else { return }
        startWorkers()
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

    private func append(_ state: inout State, _ record: NotificationRecord) {
        state.nextID += 1
        if state.persisting { state.dirty.insert(record.id) }
        state.records.append(record)
        if record.outcome == .pending { state.due.insert(dueAt: record.dueAt, id: record.id) } else { state.settled.insert(record.id) }
        guard state.records.count - state.start > Self.logCapacity else { return }
        // The oldest settled record goes; it is nearly always the oldest of all, which leaves by
        // moving `start` (a pending one in front is stepped over and removed from the middle).
        if state.records[state.start].isSettled {
            state.start += 1
        } else if let oldest = state.oldestSettled() {
            if state.persisting { state.removed.append(state.records[oldest].id) }
            state.records.remove(at: oldest)
        } else {
            // Every record is still undelivered (a receiver that never answers): the oldest
            // leaves undelivered and is counted, so the log's bound holds for pending records
            // too (probe finding N6).
            state.start += 1
            state.droppedPending += 1
        }
        // What left by `start` is freed in batches, whichever way it left (probe P5: a log of
        // undelivered records moved `start` but kept every record, 0.47 KB an event, for as long
        // as the receiver stayed silent), with every structure that indexes it.
        if state.start >= Self.compactionBatch {
            state.records.removeFirst(state.start)
            state.start = 0
            if let first = state.records.first?.id { state.held.removeAll { $0 < first } }
        }
        // The due queue keeps an entry per scheduled attempt until a worker pops it; while the
        // workers wait on a silent receiver, entries of records that left pile up: rebuilt from
        // the live pending records once they outnumber them twice over.
        if state.due.count > 2 * Self.logCapacity {
            state.due.rebuild(state.live.lazy.filter { $0.outcome == .pending && $0.dueAt.isFinite }.map { ($0.dueAt, $0.id) })
        }
        if state.settled.count > 2 * Self.logCapacity { state.settled.rebuild(ascending: state.live.lazy.filter(\.isSettled).map(\.id)) }
    }

    /// Records the log holds in memory (live ones and those waiting to be cut off), and entries
    /// in the due queue: what the log's bound bounds.
    var retained: (records: Int, dueEntries: Int) {
        state.withLock { ($0.records.count, $0.due.count) }
    }

    /// Undelivered notifications pushed out of a log full of undelivered ones, since start.
    public var droppedUndelivered: Int { state.withLock { $0.droppedPending } }

    /// One worker: takes the earliest due notification, attempts it, records the attempt.
    private func work() {
        while true {
            let now = realTime()
            let next: (index: Int, record: NotificationRecord)?? = state.withLock { state in
                guard state.running else { return .some(nil) }
                while let earliest = state.due.first, earliest.dueAt <= now {
                    _ = state.due.removeFirst()
                    // A stale entry: its record was claimed, settled, rescheduled or dropped.
                    guard let index = state.index(of: earliest.id), state.records[index].outcome == .pending,
                          state.records[index].dueAt == earliest.dueAt else { continue }
                    state.records[index].dueAt = .infinity
                    state.inFlight += 1
                    return (index, state.records[index])
                }
                return nil
            }
            guard let taken = next else {
                _ = wakeup.wait(timeout: .now() + .milliseconds(Int(nextWait(now: now) * 1000)))
                continue
            }
            guard let (_, record) = taken else { return }
            // Others may be due too: let another worker look.
            wakeup.signal()
            attempt(record)
        }
    }

    /// Sends the records a `reorder` fault held back that came before `id`, now that `id` was attempted.
    private func releaseHeld(before id: UInt64, _ state: inout State) {
        guard !state.held.isEmpty else { return }
        let now = realTime()
        let released = state.held.filter { $0 < id }
        guard !released.isEmpty else { return }
        state.held.removeAll { $0 < id }
        for heldID in released {
            if let index = state.index(of: heldID), state.records[index].outcome == .pending, state.records[index].dueAt > now {
                state.records[index].dueAt = now
                state.due.insert(dueAt: now, id: heldID)
            }
        }
        wakeup.signal()
    }

    /// Seconds until the next pending record is due (at most one second).
    private func nextWait(now: Double) -> Double {
        state.withLock { state in
            let due = state.due.first?.dueAt ?? now + 1
            return max(0.001, min(1, due - now))
        }
    }

    private func attempt(_ record: NotificationRecord) {
        var jwt = record.jwt
        // Signed by the key that signed when the event happened, while it is published; else by today's signer.
        if jwt == nil, let payload = record.unsigned, let key = record.keyID.flatMap(mockState.publishedKey) ?? mockState.signingKey {
            jwt = try? CompactJWS.signRS256(payload: payload, kid: key.keyID, key: key.privateKey).compact
        }
        // Attempts are stamped in mock time, as everything else the mock reports.
        let at = mockState.preciseNow
        var result: NotificationRecord.Attempt
        if let jwt, let url = record.url {
            var body = JSONObject()
            body["payload"] = .string(jwt)
            result = transport.post(url: url, body: JSONWriter.compact(.object(body)))
            result.at = at
        } else {
            result = NotificationRecord.Attempt(at: at, status: nil, error: "no signing key is published")
        }
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.inFlight -= 1
            guard let index = state.index(of: record.id) else { return state.draining ? Self.takeWaiters(&state) : [] }
            if let jwt, state.records[index].jwt == nil { state.records[index].signed(jwt) }
            state.records[index].attempts.append(result)
            if state.persisting { state.dirty.insert(record.id) }
            releaseHeld(before: record.id, &state)
            // Abandoned while on the wire (a reset, a cancel): the attempt is kept, the outcome too.
            guard state.records[index].outcome == .pending else { return state.draining ? Self.takeWaiters(&state) : [] }
            let tries = state.records[index].attempts.count
            if let status = result.status, (200..<300).contains(status) {
                state.settle(index, as: .delivered)
            } else if tries > retryDelays.count || !state.running || !state.records[index].retries {
                state.settle(index, as: state.running ? .failed : .abandoned)
            } else {
                state.records[index].dueAt = realTime() + Double(retryDelays[tries - 1])
                state.due.insert(dueAt: state.records[index].dueAt, id: record.id)
                // A stopper waits for the attempts to end, retries included.
                return state.draining ? Self.takeWaiters(&state) : []
            }
            return Self.takeWaiters(&state)
        }
        for waiter in waiters { waiter.resume() }
        // The attempt and the outcome are the state file's to commit before answers go.
        mockState.noteUncommittedChange()
    }

    // MARK: - Stopping

    /// Stops after giving queued deliveries up to `grace` seconds; returns what was still
    /// undelivered (also marked abandoned in the log). Suspends without holding a thread: it
    /// wakes when an attempt ends or a record is abandoned, and returns as soon as nothing due
    /// within the grace is left (no attempt on the wire, no pending record due by then), at the
    /// latest after `grace` seconds of real time, measured on the monotonic clock.
    @discardableResult
    public func stop(grace: Double) async -> [NotificationRecord] {
        collect()
        let grace = max(0, grace)
        let end = ContinuousClock.now + .milliseconds(Int64(min(grace, 86_400) * 1000))
        // Which records the grace covers: those due by then, in the log's own time.
        let dueBy = realTime() + grace
        state.withLock { $0.draining = true }
        wakeup.signal()
        while state.withLock({ Self.isBusy($0, dueBy: dueBy) }) {
            let left = ContinuousClock.now.duration(to: end)
            guard left > .zero else { break }
            let seconds = Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18
            await sleep(upTo: seconds) { state in !Self.isBusy(state, dueBy: dueBy) }
        }
        return stopNow()
    }

    /// Whether an attempt is on the wire or a pending record is due by `dueBy`.
    private static func isBusy(_ state: State, dueBy: Double) -> Bool {
        state.inFlight > 0 || state.live.contains { $0.outcome == .pending && $0.dueAt <= dueBy }
    }

    /// Stops at once, with no grace and no waiting: every pending record is marked abandoned
    /// (one on the wire finishes, and its attempt is recorded) and returned, the workers end,
    /// and readers waiting in `await` are woken.
    @discardableResult
    public func stopNow() -> [NotificationRecord] {
        let (left, waiters) = state.withLock { state -> ([NotificationRecord], [CheckedContinuation<Void, Never>]) in
            state.running = false
            state.draining = false
            var left: [NotificationRecord] = []
            state.due.removeAll()
            for index in state.live.indices where state.records[index].outcome == .pending {
                state.settle(index, as: .abandoned)
                if state.persisting { state.abandonedByStop.insert(state.records[index].id) }
                left.append(state.records[index])
            }
            return (left, Self.takeWaiters(&state))
        }
        for waiter in waiters { waiter.resume() }
        for _ in 0..<workerCount { wakeup.signal() }
        return left
    }
}

import JOSE

/// The delivery log as a projection of the record: the state's events in their one sequence (an
/// account event queues its app group's notification, with the fault decided with it; a reset
/// abandons what is pending; a delivery event records an attempt or a clear), taken up in order. `apply` is the only
/// code that changes a record's delivery, live and when a state file is read back, so a restart
/// rebuilds the same log from the events alone. Bounded: the newest `capacity` records, the oldest
/// settled ones leaving first; what leaves is freed in batches with every structure indexing it.
struct NotificationLog: Sendable {
    /// What a change did, for the deliverer: records to attempt, and whether any settled (a
    /// reader may be waiting for that).
    struct Change {
        var queued = 0
        var settled = false
        /// The record changed or made, when there is one.
        var record: NotificationRecord?
    }

    /// The log, ids (and sequence numbers) ascending; `records[start...]` are live, the prefix
    /// is dropped in batches so the oldest record leaves in O(1) amortized.
    private(set) var records: [NotificationRecord] = []
    private var start = 0
    /// Pending records by due time, and settled ones by id (oldest first).
    private var due = DueQueue()
    private var settledIDs = SettledQueue()
    /// The id the next record gets.
    private(set) var nextID: UInt64 = 1
    /// The last state event taken up (the deliverer reads on from there).
    private(set) var cursor: UInt64 = 0
    /// Records a `reorder` fault holds back until a later one has been attempted.
    private var held: [UInt64] = []
    /// Undelivered notifications pushed out of a log full of undelivered ones.
    private(set) var droppedPending = 0
    /// The last event taken up was a `notification-imported` one: the next one goes on the same
    /// import instead of beginning another.
    private var importing = false
    /// Records up to this id are not kept: a state file's compaction dropped their delivery
    /// events long after the log let go of them, so a rebuilt log skips them.
    var forgottenThrough: UInt64 = 0
    /// Most records kept.
    let capacity: Int

    /// How many dropped records gather at the front before they are cut off at once.
    static let compactionBatch = 1024
    /// How long a `reorder` fault holds a notification when no later one comes, in seconds.
    static let reorderHold = 30.0

    /// An empty log of at most `capacity` records.
    init(capacity: Int) {
        self.capacity = capacity
    }

    /// The live records.
    var live: ArraySlice<NotificationRecord> { records[start...] }

    // MARK: - Reading

    /// The index of the first live record whose `key` is above `value` (keys ascend).
    private func firstIndex(above value: UInt64, _ key: (NotificationRecord) -> UInt64) -> Int {
        var low = start
        var high = records.count
        while low < high {
            let middle = low + (high - low) / 2
            if key(records[middle]) <= value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The index of the live record `id`.
    private func index(of id: UInt64) -> Int? {
        let found = firstIndex(above: id &- 1, \.id)
        return found < records.count && records[found].id == id ? found : nil
    }

    /// The records with an id above `after`, oldest first.
    func records(after: UInt64) -> ArraySlice<NotificationRecord> { records[firstIndex(above: after, \.id)...] }

    /// The record of the notification the state event `sequence` queued, while the log keeps it.
    func record(sequence: UInt64) -> NotificationRecord? {
        let found = firstIndex(above: sequence &- 1, \.sequence)
        return found < records.count && records[found].sequence == sequence ? records[found] : nil
    }

    /// Records held in memory (live and waiting to be cut off), and entries of the due queue.
    var retained: (records: Int, dueEntries: Int) { (records.count, due.count) }

    /// Whether an attempt is due by `dueBy` (`inFlight` ones are the deliverer's to count).
    func hasPending(dueBy: Double) -> Bool { live.contains { $0.outcome == .pending && $0.dueAt <= dueBy } }

    /// When the next pending record is due, if any is.
    var nextDue: Double? { due.first?.dueAt }

    // MARK: - Taking up the state's events

    /// Takes up the state event `recorded` (the next after `cursor`, or a later one when the
    /// deliverer fell behind): an account event queues its notification, made by `notification`,
    /// due at real time `now` (plus the fault's delay); a reset abandons every pending record.
    mutating func apply(_ recorded: RecordedEvent, now: Double, notification: (AccountEventRecord, UInt64) -> PendingNotification) -> Change {
        cursor = max(cursor, recorded.sequence)
        var change = Change()
        let wasImporting = importing
        importing = false
        switch recorded.event {
        case .delivery(let event):
            if case .imported = event {
                // A run of imported records (an older file's or archive's log) stands for what the
                // events before it made of the log: the log begins again from them, its ids going on.
                if !wasImporting { beginImport() }
                importing = true
            }
            change = apply(event, now: now)
        case .accountEvent(let event):
            let pending = notification(event, recorded.sequence)
            let fault = event.notificationFault
            var record = NotificationRecord(id: nextID, notification: pending, outcome: pending.url == nil ? .noURL : .pending,
                                            dueAt: now + Double(fault?.delayMilliseconds ?? 0) / 1000)
            record.fault = fault.map { "\($0.faultID) \($0.action)" }
            switch fault?.action {
            case "drop"?:
                record.outcome = .dropped
            case "reorder"?:
                record.dueAt += Self.reorderHold
                held.append(record.id)
            default:
                break
            }
            append(record)
            if fault?.action == "duplicate" {
                var copy = NotificationRecord(id: nextID, notification: pending, outcome: .pending, dueAt: record.dueAt)
                copy.fault = record.fault
                append(copy)
                change.queued += 1
            }
            if record.outcome == .pending { change.queued += 1 } else { change.settled = true }
            change.record = record
        case .reset:
            // One test's notifications never reach the next test's receiver.
            change.settled = abandonPending(through: .max) > 0
        default:
            break
        }
        return change
    }

    /// Empties the log for an import; ids go on from the highest given.
    private mutating func beginImport() {
        records = []
        start = 0
        due = DueQueue()
        settledIDs = SettledQueue()
        held = []
    }

    /// Steps over state events the deliverer no longer has (it fell behind the kept ones).
    mutating func skip(to sequence: UInt64) {
        cursor = max(cursor, sequence)
    }

    // MARK: - Taking up the delivery events

    /// Takes up a delivery event at real time `now` (what a released `reorder` hold is due at).
    mutating func apply(_ event: DeliveryEvent, now: Double) -> Change {
        var change = Change()
        switch event {
        case .attempted(let id, let attempt, let jwt, let outcome, let dueAt):
            releaseHeld(before: id, now: now)
            guard let index = index(of: id) else { return change }
            if let jwt, records[index].jwt == nil { records[index].signed(jwt) }
            records[index].attempts.append(attempt)
            // Abandoned while on the wire (a reset, a cancel): the attempt is kept, the outcome too.
            guard records[index].outcome == .pending else { return change }
            if outcome == .pending {
                records[index].dueAt = dueAt ?? now
                due.insert(dueAt: records[index].dueAt, id: id)
            } else {
                settle(index, as: outcome)
                change.settled = true
            }
            change.record = records[index]
        case .cleared(let through, let cancelPending):
            if cancelPending { change.settled = abandonPending(through: through) > 0 }
            let kept = live.filter { !$0.isSettled || $0.id > through }
            records = Array(kept)
            start = 0
            settledIDs.rebuild(ascending: records.lazy.filter(\.isSettled).map(\.id))
        case .imported(var record):
            // Taken up as it was, in id order; one on the wire when it was written is due now.
            if record.outcome == .pending && !record.dueAt.isFinite { record.dueAt = now }
            nextID = max(nextID, record.id)
            append(record)
            change.queued = record.outcome == .pending ? 1 : 0
        }
        return change
    }

    // MARK: - The deliverer's own bookkeeping (not part of the record)

    /// The earliest record due by `now`, marked in flight (due at infinity) so no other worker
    /// takes it; stale entries of the due queue are dropped on the way.
    mutating func takeDue(now: Double) -> NotificationRecord? {
        while let earliest = due.first, earliest.dueAt <= now {
            _ = due.removeFirst()
            // A stale entry: its record was claimed, settled, rescheduled or dropped.
            guard let index = index(of: earliest.id), records[index].outcome == .pending, records[index].dueAt == earliest.dueAt else { continue }
            records[index].dueAt = .infinity
            return records[index]
        }
        return nil
    }

    /// The outcome an attempt at `record` ends in, and when the next is due: delivered on a 2xx;
    /// failed after the last of `retryDelays` (or at once under a `once` fault); otherwise
    /// pending, due after the next delay. `running` false: the mock stops, and it is abandoned.
    func outcome(of attempt: NotificationRecord.Attempt, for id: UInt64, retryDelays: [Int], running: Bool,
                 now: Double) -> (outcome: NotificationRecord.Outcome, dueAt: Double?) {
        guard let index = index(of: id) else { return (.failed, nil) }
        let tries = records[index].attempts.count + 1
        if let status = attempt.status, (200..<300).contains(status) { return (.delivered, nil) }
        guard running else { return (.abandoned, nil) }
        guard tries <= retryDelays.count, records[index].retries else { return (.failed, nil) }
        return (.pending, now + Double(retryDelays[tries - 1]))
    }

    /// Marks every pending record abandoned because the mock stops: in memory only, so a state
    /// file keeps them pending and delivery resumes after a restart. Returns them.
    mutating func abandonForStop() -> [NotificationRecord] {
        due.removeAll()
        var left: [NotificationRecord] = []
        for index in live.indices where records[index].outcome == .pending {
            records[index].outcome = .abandoned
            left.append(records[index])
        }
        return left
    }

    // MARK: - Inside

    /// Marks pending records up to `through` abandoned: none is attempted again (one on the wire
    /// finishes, and its attempt is recorded). Returns how many.
    private mutating func abandonPending(through: UInt64) -> Int {
        var count = 0
        for index in live.indices where records[index].outcome == .pending && records[index].id <= through {
            settle(index, as: .abandoned)
            count += 1
        }
        if count > 0 { due.rebuild(live.lazy.filter { $0.outcome == .pending && $0.dueAt.isFinite }.map { ($0.dueAt, $0.id) }) }
        return count
    }

    /// Ends delivery of the pending record at `index` with `outcome`: the one way a record
    /// settles, so `settledIDs` knows every settled record.
    private mutating func settle(_ index: Int, as outcome: NotificationRecord.Outcome) {
        records[index].outcome = outcome
        settledIDs.insert(records[index].id)
    }

    /// Sends the records a `reorder` fault held back that came before `id`, now that `id` was attempted.
    private mutating func releaseHeld(before id: UInt64, now: Double) {
        guard !held.isEmpty else { return }
        let released = held.filter { $0 < id }
        guard !released.isEmpty else { return }
        held.removeAll { $0 < id }
        for heldID in released {
            if let index = index(of: heldID), records[index].outcome == .pending, records[index].dueAt > now {
                records[index].dueAt = now
                due.insert(dueAt: now, id: heldID)
            }
        }
    }

    /// The index of the oldest live settled record, stale entries of `settledIDs` dropped on the way.
    private mutating func oldestSettled() -> Int? {
        while let id = settledIDs.first {
            if let found = index(of: id), records[found].isSettled { return found }
            settledIDs.removeFirst()
        }
        return nil
    }

    /// Adds `record` at the end; beyond `capacity`, the oldest settled record goes (nearly always
    /// the oldest of all, which leaves by moving `start`), and in a log of undelivered records
    /// the oldest leaves undelivered and is counted.
    private mutating func append(_ record: NotificationRecord) {
        nextID = max(nextID, record.id + 1)
        guard record.id > forgottenThrough else { return }
        records.append(record)
        if record.outcome == .pending { due.insert(dueAt: record.dueAt, id: record.id) } else { settledIDs.insert(record.id) }
        guard records.count - start > capacity else { return }
        if records[start].isSettled {
            start += 1
        } else if let oldest = oldestSettled() {
            records.remove(at: oldest)
        } else {
            // Every record is still undelivered (a receiver that never answers): the oldest
            // leaves undelivered and is counted, so the log's bound holds for pending records
            // too.
            start += 1
            droppedPending += 1
        }
        // What left by `start` is freed in batches, whichever way it left, with every
        // structure that indexes it.
        if start >= Self.compactionBatch {
            records.removeFirst(start)
            start = 0
            if let first = records.first?.id { held.removeAll { $0 < first } }
        }
        // The due queue keeps an entry per scheduled attempt until a worker pops it: rebuilt
        // from the live pending records once stale entries outnumber them twice over.
        if due.count > 2 * capacity {
            due.rebuild(live.lazy.filter { $0.outcome == .pending && $0.dueAt.isFinite }.map { ($0.dueAt, $0.id) })
        }
        if settledIDs.count > 2 * capacity { settledIDs.rebuild(ascending: live.lazy.filter(\.isSettled).map(\.id)) }
    }
}

import Synchronization

/// What the SMTP port received, newest last: at most `capacity` records and `maxBytes` of them,
/// the oldest dropped first, so memory stays flat under any amount of mail. Readers may wait
/// for the next record (`GET /__mock/mail?wait=S`).
public final class MailBox: Sendable {
    private struct State {
        /// Records in order; those before `head` are dropped and compacted away in batches, so
        /// dropping the oldest costs no shift of the whole array.
        var records: [MailRecord] = []
        var head = 0
        var bytes = 0
        var nextID: UInt64 = 1

        var live: ArraySlice<MailRecord> { records[head...] }

        /// The position of record `id` among the live ones.
        func index(of id: UInt64) -> Int? {
            // Ids increase along the array: a binary search.
            var low = head, high = records.count
            while low < high {
                let middle = low + (high - low) / 2
                if records[middle].id < id { low = middle + 1 } else { high = middle }
            }
            return low < records.count && records[low].id == id ? low : nil
        }
    }

    /// Most records kept.
    public let capacity: Int
    /// Most bytes of records kept.
    public let maxBytes: Int
    private let state = Mutex(State())
    private let readers = WakeList()

    /// An empty mailbox.
    public init(capacity: Int, maxBytes: Int) {
        self.capacity = max(1, capacity)
        self.maxBytes = max(1, maxBytes)
    }

    /// Keeps `record` (its id is given here) and returns the id.
    @discardableResult
    func append(_ record: MailRecord) -> UInt64 {
        let id = state.withLock { state in
            var record = record
            record.id = state.nextID
            state.nextID += 1
            state.bytes += record.cost
            state.records.append(record)
            while state.records.count - state.head > capacity || (state.bytes > maxBytes && state.records.count - state.head > 1) {
                state.bytes -= state.records[state.head].cost
                state.head += 1
            }
            if state.head > 64 && state.head * 2 > state.records.count {
                state.records.removeFirst(state.head)
                state.head = 0
            }
            return record.id
        }
        readers.wake()
        return id
    }

    /// Records how the copy of record `id` to the catcher went (nothing if it was dropped meanwhile).
    func setForwarding(_ forwarding: MailRecord.Forwarding, of id: UInt64) {
        state.withLock { state in
            guard let index = state.index(of: id) else { return }
            state.records[index].forwarding = forwarding
        }
        readers.wake()
    }

    /// The records after `after`, oldest first, at most `limit`.
    public func records(after: UInt64 = 0, limit: Int = .max) -> [MailRecord] {
        state.withLock { state in Array(state.live.lazy.filter { $0.id > after }.prefix(limit)) }
    }

    /// Record `id`, if it is still kept.
    public func record(_ id: UInt64) -> MailRecord? {
        state.withLock { state in state.index(of: id).map { state.records[$0] } }
    }

    /// The records after `after`, waiting up to `seconds` for one to arrive.
    public func await(after: UInt64, seconds: Double, limit: Int = .max) async -> [MailRecord] {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(max(0, min(seconds, 3600)) * 1000))
        while true {
            let found = records(after: after, limit: limit)
            let left = deadline - clock.now
            guard found.isEmpty, left > .zero, !readers.isReleased, !Task.isCancelled else { return found }
            // A wake for a forwarding outcome, not a new record, sleeps again until the deadline.
            await readers.sleep(seconds: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18) {
                state.withLock { state in (state.records.last?.id ?? 0) > after }
            }
        }
    }

    /// Forgets every record; ids go on increasing.
    public func clear() {
        state.withLock { state in
            state.records.removeAll()
            state.head = 0
            state.bytes = 0
        }
    }

    /// Wakes and answers every waiting reader (the mock is stopping).
    func releaseReaders() { readers.release() }

    /// Whether `target` is a `--mail-forward` value: `smtp://HOST:PORT`.
    public static func isForwardTarget(_ target: String) -> Bool { MailForwarder.parse(target) != nil }

    /// Records kept and their bytes (for tests and the benchmark).
    public var usage: (count: Int, bytes: Int) { state.withLock { ($0.records.count - $0.head, $0.bytes) } }
}

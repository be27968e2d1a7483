import Synchronization

/// What the SMTP port received, newest last: at most `capacity` records and `maxBytes` of them,
/// the oldest dropped first, so memory stays flat under any amount of mail. Readers may wait
/// for the next record (`GET /__mock/mail?wait=S`).
package final class MailBox: Sendable {
    private struct State {
        /// Records in order; those before `head` are dropped and compacted away in batches, so
        /// dropping the oldest costs no shift of the whole array.
        var records: [MailRecord] = []
        var head = 0
        var bytes = 0
        var nextID: UInt64 = 1

        /// The position of record `id` among the live ones.
        func index(of id: UInt64) -> Int? {
            let low = firstIndex(from: id)
            return low < records.count && records[low].id == id ? low : nil
        }

        /// The position of the first live record whose id is `id` or more (ids increase along
        /// the array: a binary search, never a scan under the lock).
        func firstIndex(from id: UInt64) -> Int {
            var low = head, high = records.count
            while low < high {
                let middle = low + (high - low) / 2
                if records[middle].id < id { low = middle + 1 } else { high = middle }
            }
            return low
        }
    }

    /// Most records kept.
    let capacity: Int
    /// Most bytes of records kept.
    let maxBytes: Int
    private let state = Mutex(State())
    private let readers = WakeList()

    /// An empty mailbox.
    init(capacity: Int, maxBytes: Int) {
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
                // Its bytes go now, not when the array is next compacted.
                state.records[state.head].raw = nil
                state.records[state.head].recipients = []
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

    /// Records how one copy of record `id` to the catcher went, `error` nil when it arrived
    /// (nothing if the record was dropped meanwhile).
    func copySent(of id: UInt64, error: String?) {
        state.withLock { state in
            guard let index = state.index(of: id), var forwarding = state.records[index].forwarding else { return }
            if let error {
                if forwarding.outcome != .failed { forwarding.error = error }
                forwarding.outcome = .failed
            } else {
                forwarding.arrived += 1
                if forwarding.arrived >= forwarding.copies && forwarding.outcome == .pending { forwarding.outcome = .delivered }
            }
            state.records[index].forwarding = forwarding
        }
        readers.wake()
    }

    /// The records after `after`, oldest first: at most `limit`, and no more once their
    /// messages come to `maxBytes` (the first is always given), so one answer stays bounded.
    package func records(after: UInt64 = 0, limit: Int = .max, maxBytes: Int = .max) -> [MailRecord] {
        state.withLock { state in
            var found: [MailRecord] = []
            var bytes = 0
            var index = after == .max ? state.records.count : state.firstIndex(from: after + 1)
            while index < state.records.count && found.count < limit {
                let size = state.records[index].raw?.count ?? 0
                if !found.isEmpty && bytes + size > maxBytes { break }
                bytes += size
                found.append(state.records[index])
                index += 1
            }
            return found
        }
    }

    /// Record `id`, if it is still kept.
    func record(_ id: UInt64) -> MailRecord? {
        state.withLock { state in state.index(of: id).map { state.records[$0] } }
    }

    /// The records after `after`, waiting up to `seconds` for one to arrive.
    package func await(after: UInt64, seconds: Double, limit: Int = .max, maxBytes: Int = .max) async -> [MailRecord] {
        let clock = ContinuousClock()
        let deadline = clock.now + .milliseconds(Int64(max(0, min(seconds, 3600)) * 1000))
        while true {
            let found = records(after: after, limit: limit, maxBytes: maxBytes)
            let left = deadline - clock.now
            guard found.isEmpty, left > .zero, !readers.isReleased, !Task.isCancelled else { return found }
            // A wake for a forwarding outcome, not a new record, sleeps again until the deadline.
            await readers.sleep(seconds: Double(left.components.seconds) + Double(left.components.attoseconds) / 1e18) {
                state.withLock { state in (state.records.last?.id ?? 0) > after }
            }
        }
    }

    /// Forgets every record; ids go on increasing.
    func clear() {
        state.withLock { state in
            state.records.removeAll()
            state.head = 0
            state.bytes = 0
        }
    }

    /// Wakes and answers every waiting reader (the mock is stopping).
    func releaseReaders() { readers.release() }

    /// Whether `target` is a `--mail-forward` value: `smtp://HOST:PORT`.
    package static func isForwardTarget(_ target: String) -> Bool { MailForwarder.parse(target) != nil }

    /// The host and port of a `--mail-forward` value.
    package static func forwardTarget(_ target: String) -> (host: String, port: Int)? { MailForwarder.parse(target) }

    /// Records kept and their bytes (for tests and the benchmark).
    package var usage: (count: Int, bytes: Int) { state.withLock { ($0.records.count - $0.head, $0.bytes) } }
}

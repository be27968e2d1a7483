import MiniHTTP
import Synchronization

/// The request journal: every exchange the mock has, kept in a ring of the newest `capacity`
/// (fewer when they weigh more than `byteBudget`), for contract tests to assert on. It observes
/// the server (`HTTPExchangeObserver`) so MiniHTTP's own answers and requests cut off are in it
/// too; the journal's own routes are not. Recording is an append under a short lock on the I/O
/// thread; decoding (forms, the client secret) waits until someone reads.
final class RequestJournal: HTTPExchangeObserver {
    /// Entries kept unless the scenario says otherwise.
    static let defaultCapacity = 10_000
    /// Most entries a scenario may ask to keep.
    static let maxCapacity = 100_000
    /// Bytes the kept requests may hold together: the ring's memory ceiling under any load.
    static let byteBudget = 32 * 1024 * 1024
    /// Most entries one page lists.
    static let pageLimit = 1000
    /// The journal's own routes, never journaled (reading the journal would fill it).
    static let ownPrefix = "/__mock/requests"

    private struct Ring {
        var records: [JournalRecord?]
        /// Index of the oldest record.
        var start = 0
        var count = 0
        var weight = 0
        var lastID: UInt64 = 0
    }

    let capacity: Int
    private let ring: Mutex<Ring>
    private let waiters = WakeList()
    private let realTime: @Sendable () -> Double
    /// Finds the route a request took, once the table exists (it is built over this journal).
    private let routes = Mutex<RouteTable?>(nil)

    init(capacity: Int, realTime: @escaping @Sendable () -> Double) {
        self.capacity = max(1, capacity)
        self.realTime = realTime
        ring = Mutex(Ring(records: []))
    }

    /// Lets entries name the route that took them.
    func attach(_ table: RouteTable) {
        routes.withLock { $0 = table }
    }

    // MARK: - Recording

    func observe(_ exchange: HTTPExchange) {
        if let path = exchange.request?.path, path.hasPrefix(Self.ownPrefix) { return }
        // Built outside the lock; only the id is given inside it. What the ring drops is freed
        // after the lock is let go: the critical section only moves records.
        var record = JournalRecord(id: 0, time: realTime(), exchange: exchange)
        var dropped: [JournalRecord] = []
        let oldest: JournalRecord? = ring.withLock { ring in
            ring.lastID += 1
            record.id = ring.lastID
            var oldest: JournalRecord?
            if ring.count == ring.records.count && ring.records.count < capacity {
                // Full but below capacity: grow, oldest first again.
                if ring.start != 0 {
                    ring.records = Array(ring.records[ring.start...] + ring.records[..<ring.start])
                    ring.start = 0
                }
                ring.records.append(record)
            } else {
                if ring.count == ring.records.count { oldest = drop(&ring) }
                ring.records[(ring.start + ring.count) % ring.records.count] = record
            }
            ring.count += 1
            ring.weight += record.weight
            while ring.weight > Self.byteBudget && ring.count > 1 {
                if let heavy = drop(&ring) { dropped.append(heavy) }
            }
            return oldest
        }
        _ = consume oldest
        _ = consume dropped
        waiters.wake()
    }

    /// Takes the oldest record out of the ring.
    private func drop(_ ring: inout Ring) -> JournalRecord? {
        let oldest = ring.records[ring.start].take()
        ring.weight -= oldest?.weight ?? 0
        ring.start = (ring.start + 1) % ring.records.count
        ring.count -= 1
        return oldest
    }

    // MARK: - Reading

    /// The kept entries matching `filter`, oldest first, at most `limit`; and how many entries
    /// after `filter.after` are no longer kept (matching or not: they cannot be looked at).
    func entries(matching filter: RequestFilter, limit: Int = .max) -> (entries: [JournalEntry], missed: UInt64) {
        let (records, firstKept) = ring.withLock { ring -> ([JournalRecord], UInt64) in
            var records: [JournalRecord] = []
            let firstKept = ring.count == 0 ? ring.lastID &+ 1 : ring.records[ring.start]?.id ?? 0
            for offset in 0..<ring.count {
                guard let record = ring.records[(ring.start + offset) % ring.records.count], record.id > filter.after else { continue }
                records.append(record)
            }
            return (records, firstKept)
        }
        let table = routes.withLock { $0 }
        var entries: [JournalEntry] = []
        for record in records {
            let entry = JournalEntry(record, route: record.request.flatMap { table?.route($0.method, $0.path) })
            guard filter.matches(entry) else { continue }
            entries.append(entry)
            if entries.count == limit { break }
        }
        // Written so that no `after` a caller sends can overflow (after may be UInt64.max).
        let missed = firstKept > 0 && filter.after < firstKept - 1 ? firstKept - 1 - filter.after : 0
        return (entries, missed)
    }

    /// Waits up to `seconds` for an entry matching `filter`; answers what `entries` would.
    func awaitEntries(matching filter: RequestFilter, limit: Int, seconds: Double) async -> (entries: [JournalEntry], missed: UInt64) {
        let deadline = realTime() + seconds
        while true {
            let seen = lastID
            let page = entries(matching: filter, limit: limit)
            let left = deadline - realTime()
            if !page.entries.isEmpty || page.missed > 0 || left <= 0 || Task.isCancelled || waiters.isReleased { return page }
            await waiters.sleep(seconds: left) { lastID != seen }
        }
    }

    /// How many kept entries match `filter`.
    func count(matching filter: RequestFilter) -> Int {
        entries(matching: filter).entries.count
    }

    /// Forgets every entry; ids go on from where they were. Returns how many were forgotten.
    @discardableResult
    func clear() -> Int {
        ring.withLock { ring in
            let cleared = ring.count
            ring.records = []
            ring.start = 0
            ring.count = 0
            ring.weight = 0
            return cleared
        }
    }

    /// Long polls asleep now.
    var waitingReaders: Int { waiters.count }

    /// The newest id given (0 before the first).
    var lastID: UInt64 { ring.withLock { $0.lastID } }

    /// Wakes long polls and answers later ones at once: the mock is stopping.
    func releaseReaders() {
        waiters.release()
    }
}

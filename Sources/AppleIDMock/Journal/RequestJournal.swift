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

    let capacity: Int
    private let ring: Mutex<JournalRing>
    private let waiters = WakeList()
    private let realTime: @Sendable () -> Double
    /// Finds the route a request took, once the table exists (it is built over this journal).
    /// Its names only: the table's routes hold this journal, so holding the table would keep
    /// every stopped mock alive.
    private let routes = Mutex<RouteNames?>(nil)

    init(capacity: Int, realTime: @escaping @Sendable () -> Double) {
        self.capacity = max(1, capacity)
        self.realTime = realTime
        ring = Mutex(JournalRing(slotCapacity: self.capacity, byteBudget: Self.byteBudget))
    }

    /// Lets entries name the route that took them.
    func attach(_ table: RouteTable) {
        routes.withLock { $0 = table.names }
    }

    // MARK: - Recording

    func observe(_ exchange: consuming HTTPExchange) {
        if let path = exchange.request?.path, path.utf8.starts(with: Self.ownPrefix.utf8) { return }
        // Sized outside the lock; inside it the record's bytes are written into the ring, which
        // allocates nothing and frees nothing (the oldest's bytes are simply written over).
        let plan = JournalRecord.Plan(exchange)
        let time = realTime()
        _ = ring.withLock { ring in
            ring.append(length: plan.length) { base in JournalRecord.encode(exchange, time: time, plan: plan, into: base) }
        }
        waiters.wake()
    }

    // MARK: - Reading

    /// The kept entries matching `filter`, oldest first, at most `limit`; and how many entries
    /// after `filter.after` are no longer kept (matching or not: they cannot be looked at).
    func entries(matching filter: RequestFilter, limit: Int = .max) -> (entries: [JournalEntry], missed: UInt64) {
        // The bytes are copied out under the lock and decoded after it.
        let (copied, spans, firstKept) = ring.withLock { ring -> ([UInt8], [(id: UInt64, range: Range<Int>)], UInt64) in
            var copied: [UInt8] = []
            var spans: [(id: UInt64, range: Range<Int>)] = []
            ring.forEach(after: filter.after) { id, bytes in
                spans.append((id, copied.count..<copied.count + bytes.count))
                copied.append(contentsOf: bytes)
            }
            return (copied, spans, ring.firstID)
        }
        let records: [(UInt64, JournalRecord)] = copied.withUnsafeBytes { buffer in
            spans.compactMap { span in JournalRecord(decoding: UnsafeRawBufferPointer(rebasing: buffer[span.range])).map { (span.id, $0) } }
        }
        let table = routes.withLock { $0 }
        var entries: [JournalEntry] = []
        for (id, record) in records {
            let entry = JournalEntry(id: id, record, route: record.request.flatMap { table?.route($0.method, $0.path) })
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
            ring.removeAll()
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

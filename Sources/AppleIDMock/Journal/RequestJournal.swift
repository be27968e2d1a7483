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
    private let routes = AtomicLazyReference<RouteNamesBox>()

    /// The route table's names, set once (`attach`) and read at every exchange without a lock.
    private final class RouteNamesBox: Sendable {
        let names: RouteNames
        init(_ names: RouteNames) { self.names = names }
    }
    /// Records looked at by reads since start (their keys read in place).
    private let examinedCount = Atomic<Int>(0)

    init(capacity: Int, realTime: @escaping @Sendable () -> Double) {
        self.capacity = max(1, capacity)
        self.realTime = realTime
        ring = Mutex(JournalRing(slotCapacity: self.capacity, byteBudget: Self.byteBudget))
    }

    /// Lets entries name the route that took them.
    func attach(_ table: RouteTable) {
        _ = routes.storeIfNil(RouteNamesBox(table.names))
    }

    // MARK: - Recording

    func observe(_ exchange: consuming HTTPExchange) {
        if let path = exchange.request?.path, path.utf8.starts(with: Self.ownPrefix.utf8) { return }
        // Sized outside the lock, and what filters read worked out there too; inside it the
        // record's bytes are written into the ring, which allocates nothing and frees nothing
        // (the oldest's bytes are simply written over).
        let plan = JournalRecord.Plan(exchange, routes: routes.load()?.names)
        let time = realTime()
        _ = ring.withLock { ring in
            ring.append(length: plan.length) { base in JournalRecord.encode(exchange, time: time, plan: plan, into: base) }
        }
        waiters.wake()
    }

    // MARK: - Reading

    /// Bytes of kept records one page of `GET /__mock/requests` decodes at most (at least one
    /// entry): what one read holds stays bounded whatever the entries weigh.
    static let pageBytes = 4 * 1024 * 1024

    /// The kept entries matching `filter`, oldest first, at most `limit`, and no more once
    /// `byteLimit` bytes of records are taken (the first always is); and how many entries after
    /// `filter.after` are no longer kept (matching or not: they cannot be looked at). Filtering
    /// reads each record's keys in place under the lock; only the matches are copied out and
    /// decoded, after it.
    func entries(matching filter: RequestFilter, limit: Int = .max, byteLimit: Int = .max) -> (entries: [JournalEntry], missed: UInt64) {
        let scan = scan(filter, limit: limit, byteLimit: byteLimit)
        return (scan.entries, scan.missed)
    }

    /// What one look through the journal found, and the newest id it looked at.
    private struct Scan {
        var entries: [JournalEntry]
        var missed: UInt64
        var through: UInt64
    }

    private func scan(_ filter: RequestFilter, limit: Int, byteLimit: Int) -> Scan {
        let (copied, spans, firstKept, through) = ring.withLock { ring -> ([UInt8], [(id: UInt64, range: Range<Int>)], UInt64, UInt64) in
            var copied: [UInt8] = []
            var spans: [(id: UInt64, range: Range<Int>)] = []
            var through = filter.after
            ring.forEach(after: filter.after) { id, bytes in
                through = id
                guard let keys = JournalRecord.keys(of: bytes), filter.matches(keys, id: id) else { return true }
                spans.append((id, copied.count..<copied.count + bytes.count))
                copied.append(contentsOf: bytes)
                return spans.count < limit && copied.count < byteLimit
            }
            examinedCount.add(Int(clamping: through &- filter.after), ordering: .relaxed)
            return (copied, spans, ring.firstID, through)
        }
        let entries = Self.decode(copied, spans)
        // Written so that no `after` a caller sends can overflow (after may be UInt64.max).
        let missed = firstKept > 0 && filter.after < firstKept - 1 ? firstKept - 1 - filter.after : 0
        return Scan(entries: entries, missed: missed, through: through)
    }

    /// The records at `spans` of `copied`, decoded.
    private static func decode(_ copied: [UInt8], _ spans: [(id: UInt64, range: Range<Int>)]) -> [JournalEntry] {
        copied.withUnsafeBytes { buffer in
            spans.compactMap { span in
                JournalRecord(decoding: UnsafeRawBufferPointer(rebasing: buffer[span.range])).map { JournalEntry(id: span.id, $0) }
            }
        }
    }

    /// The newest kept entries matching `filter`, newest first: at most `limit`, looking through
    /// at most `scanLimit` entries from the newest back. Also how many it looked through, and
    /// whether that was every kept entry.
    func newest(matching filter: RequestFilter, limit: Int, scanLimit: Int) -> (entries: [JournalEntry], scanned: Int, complete: Bool) {
        let (copied, spans, scanned, complete) = ring.withLock { ring -> ([UInt8], [(id: UInt64, range: Range<Int>)], Int, Bool) in
            var copied: [UInt8] = []
            var spans: [(id: UInt64, range: Range<Int>)] = []
            var scanned = 0
            ring.forEachNewestFirst { id, bytes in
                guard scanned < scanLimit else { return false }
                scanned += 1
                if let keys = JournalRecord.keys(of: bytes), filter.matches(keys, id: id) {
                    spans.append((id, copied.count..<copied.count + bytes.count))
                    copied.append(contentsOf: bytes)
                }
                return spans.count < limit
            }
            return (copied, spans, scanned, scanned == ring.count)
        }
        return (Self.decode(copied, spans), scanned, complete)
    }

    /// Waits up to `seconds` for an entry matching `filter`; answers what `entries` would. Each
    /// look after the first goes through only the entries that came since the one before: a
    /// long poll whose filter matches nothing costs nothing per request it lets pass (twenty
    /// such polls re-read the whole journal at every request, both cores and 17 times
    /// slower token exchanges).
    func awaitEntries(matching filter: RequestFilter, limit: Int, seconds: Double, byteLimit: Int = .max) async -> (entries: [JournalEntry], missed: UInt64) {
        let deadline = realTime() + seconds
        var cursor = filter
        while true {
            let seen = lastID
            let page = scan(cursor, limit: limit, byteLimit: byteLimit)
            let left = deadline - realTime()
            if !page.entries.isEmpty || page.missed > 0 || left <= 0 || Task.isCancelled || waiters.isReleased { return (page.entries, page.missed) }
            cursor.after = max(cursor.after, page.through)
            await waiters.sleep(seconds: left) { lastID != seen }
        }
    }

    /// How many kept entries match `filter`: counted on the records' keys in place, nothing
    /// copied or decoded.
    func count(matching filter: RequestFilter) -> Int {
        ring.withLock { ring in
            var count = 0
            ring.forEach(after: filter.after) { id, bytes in
                if let keys = JournalRecord.keys(of: bytes), filter.matches(keys, id: id) { count += 1 }
                return true
            }
            return count
        }
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

    /// Records reads have looked at since start: what a long poll's looks cost.
    var examined: Int { examinedCount.load(ordering: .relaxed) }

    /// Long polls asleep now.
    var waitingReaders: Int { waiters.count }

    /// The newest id given (0 before the first).
    var lastID: UInt64 { ring.withLock { $0.lastID } }

    /// Wakes long polls and answers later ones at once: the mock is stopping.
    func releaseReaders() {
        waiters.release()
    }
}

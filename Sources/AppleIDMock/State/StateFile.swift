import FoundationEssentials
import JOSE

/// The state file of `serve --state FILE`: a SQLite database in WAL mode holding what a restart
/// must not forget. It stores the mock's beginning (`StateGenesis`: MAC secret, clock, start,
/// the keys it began with) and every event since (each carries its whole effect, so the
/// scenario, the genesis and the events rebuild the same `World`), the seeded streams' positions
/// (the events' and `/auth/keys` orders'), and the notification log with the deliverer's
/// cursor. It is written, never queried, while the mock runs: the writer commits batches, and
/// reads happen once, at start.
///
/// One mock holds a file at a time: a `StateFileLock` taken before SQLite opens the file, and the
/// connection's exclusive lock from its first write until it closes, so a second mock (or
/// `state` command) on the same file is refused at once, and of two starting at the same moment
/// exactly one serves.
final class StateFile: @unchecked Sendable {
    /// The schema this build writes and the newest it reads.
    static let schemaVersion: Int64 = 1
    /// `PRAGMA application_id`: "AIDM", so another program's SQLite file is told apart.
    static let applicationID: Int64 = 0x4149_444D
    /// The newest events are kept whole for the event feed; older ones that no later state needs
    /// are dropped (see `compactStep`).
    static let keptEvents: Int64 = 10_000
    /// Events one compaction step looks through: a step is its own short transaction, between
    /// the writer's commits, never inside one (probe P2: a compaction in the writer's transaction
    /// held every commit, health's included, for 19 s at 20,000 unredeemed codes and 283 s at 60,000).
    static let compactionStep: Int64 = 2_000
    /// Seconds `close` gives compaction before it folds the WAL and lets go: a stop stays within
    /// a container's grace; what is left is compacted after the next start.
    static let closingCompactionSeconds = 2.0

    /// Schema changes, in order: `migrations[n]` brings a file from version n to n + 1.
    private static let migrations: [String] = [
        """
        CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID;
        CREATE TABLE events(sequence INTEGER PRIMARY KEY, at REAL NOT NULL, type TEXT NOT NULL, code TEXT, expires INTEGER, body TEXT NOT NULL);
        CREATE INDEX events_code ON events(code) WHERE code IS NOT NULL;
        CREATE TABLE notifications(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
        """,
    ]

    private let database: SQLiteDatabase
    /// This process's hold on the file, taken before SQLite opens it (`StateFileLock`).
    private let lock: StateFileLock
    /// The file's path.
    let path: String
    /// What the file held when opened; nil for a new file.
    let stored: StoredState?
    /// The scenario the state belongs to, as its pretty JSON.
    private(set) var scenarioJSON: String
    private var insertEvent: SQLiteStatement?
    private var upsertNotification: SQLiteStatement?
    private var setMeta: SQLiteStatement?
    private var writtenSinceCompaction: Int64 = 0
    /// The newest event's sequence number in the file.
    private var lastSequence: Int64 = 0
    /// A compaction under way: events at or before `cutoff` are looked through in steps, those
    /// after `done` still to come.
    private var compaction: (cutoff: Int64, done: Int64)?
    /// SQLite's steps in compaction since the file was opened: its cost, machine-independent.
    private(set) var compactionSteps: Int64 = 0

    /// Opens (or creates) the state file at `path` for a mock serving the scenario whose pretty
    /// JSON is `scenarioJSON`, takes its lock and reads what it holds. Refused — the file left as
    /// it was — when it is in use, damaged, newer than this build, another program's, or the
    /// state of another scenario. `readOnly` reads and holds the file without writing to it;
    /// with it, a nil `scenarioJSON` takes the file's own scenario.
    init(path: String, scenarioJSON: String?, readOnly: Bool = false) throws(StateFileError) {
        self.path = path
        self.scenarioJSON = scenarioJSON ?? ""
        let exists = FileManager.default.fileExists(atPath: path)
        if readOnly && !exists { throw StateFileError(path: path, problem: .missing) }
        if exists && BoundedFile.isDirectory(path) { throw StateFileError(path: path, problem: .notAFile) }
        do {
            lock = try StateFileLock(path: path, create: !readOnly && !exists)
        } catch {
            switch error {
            case .held: throw StateFileError(path: path, problem: .inUse)
            case .io(let message): throw StateFileError(path: path, problem: .io(message))
            }
        }
        // An empty file is new only when this process made it: one found empty is a copy that
        // failed or a volume restored empty, and taking it as new would silently drop a state (P8).
        if !lock.made && lock.size == 0 { throw StateFileError(path: path, problem: .empty) }
        do {
            database = try SQLiteDatabase(path: path, create: false)
        } catch {
            throw StateFileError(path: path, problem: .io(error.description))
        }
        // Until the checks pass, a SQLite error means a file that is not (a whole) state file.
        var checking = true
        do {
            // The file is read once, at start, and then only written: a small page cache will do.
            try database.execute("PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-256")
            // Read-only checks first: nothing is written to a file this build refuses.
            let application = try database.integer("PRAGMA application_id") ?? 0
            let version = try database.integer("PRAGMA user_version") ?? 0
            let tables = try database.integer("SELECT count(*) FROM sqlite_schema") ?? 0
            if application != Self.applicationID && !(application == 0 && version == 0 && tables == 0) {
                throw StateFileError(path: path, problem: .foreign)
            }
            if version > Self.schemaVersion { throw StateFileError(path: path, problem: .newer(version)) }
            if tables > 0 {
                let check = try database.texts("PRAGMA quick_check")
                guard check == ["ok"] else { throw StateFileError(path: path, problem: .damaged(check.prefix(3).joined(separator: "; "))) }
            }
            if tables > 0, let held = try database.texts("SELECT value FROM meta WHERE key = 'scenario'").first {
                guard let scenarioJSON else {
                    self.scenarioJSON = held
                    stored = try Self.read(database, path: path)
                    return
                }
                guard held == scenarioJSON else { throw StateFileError(path: path, problem: .otherScenario) }
            }
            if readOnly && tables == 0 { throw StateFileError(path: path, problem: .damaged("no tables: not a state file")) }
            stored = tables > 0 ? try Self.read(database, path: path) : nil
            database.releaseMemory()
            if readOnly { return }
            checking = false
            database.checkpointOnClose(true)
            // WAL: a commit appends to the log and syncs it (synchronous=FULL): durable at COMMIT.
            // Compaction's scratch table stays in memory.
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA temp_store=MEMORY")
            try database.transaction { () throws(SQLiteError) in
                for index in Int(version)..<Self.migrations.count { try database.execute(Self.migrations[index]) }
                try database.execute("PRAGMA application_id=\(Self.applicationID); PRAGMA user_version=\(Self.schemaVersion)")
                try database.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES('scenario', ?1)").run(.text(self.scenarioJSON))
            }
            // Rows written by earlier runs count toward the next compaction.
            writtenSinceCompaction = try database.integer("SELECT count(*) FROM events") ?? 0
            lastSequence = try database.integer("SELECT max(sequence) FROM events") ?? 0
        } catch let error as StateFileError {
            throw error
        } catch let error as SQLiteError {
            throw StateFileError(path: path, problem: error.isBusy ? .inUse : error.isDamaged || checking ? .damaged(error.message) : .io(error.description))
        } catch {
            throw StateFileError(path: path, problem: .io("\(error)"))
        }
    }

    /// Writes the mock's beginning into a new file.
    func writeGenesis(_ genesis: StateGenesis) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            try meta("genesis", genesis.stored)
        }
    }

    /// Commits `batch` in one transaction: its events, the seeded stream's position after them,
    /// the notification log's changes. Durable when it returns (WAL, synchronous=FULL).
    func write(_ batch: StateBatch) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            if insertEvent == nil {
                insertEvent = try database.prepare("INSERT OR REPLACE INTO events(sequence, at, type, code, expires, body) VALUES(?1, ?2, ?3, ?4, ?5, ?6)")
            }
            for recorded in batch.events {
                let (code, expires) = Self.compactionKeys(recorded.event)
                try insertEvent?.run(.integer(Int64(clamping: recorded.sequence)), .real(recorded.at), .text(recorded.event.name),
                                     code.map(SQLiteValue.text) ?? .null, expires.map(SQLiteValue.integer) ?? .null,
                                     .text(Self.text(recorded.event.stored)))
            }
            if let random = batch.random { try meta("random", random.stored) }
            if let keyOrder = batch.keyOrder { try meta("jwks_order", keyOrder.stored) }
            if let notifications = batch.notifications {
                if notifications.replaceAll { try database.execute("DELETE FROM notifications") }
                if upsertNotification == nil {
                    upsertNotification = try database.prepare("INSERT OR REPLACE INTO notifications(id, body) VALUES(?1, ?2)")
                }
                for record in notifications.records {
                    try upsertNotification?.run(.integer(Int64(clamping: record.id)), .text(Self.text(record.stored)))
                }
                for id in notifications.removed {
                    try database.prepare("DELETE FROM notifications WHERE id = ?1").run(.integer(Int64(clamping: id)))
                }
                if notifications.firstLiveID > 1 {
                    try database.prepare("DELETE FROM notifications WHERE id < ?1").run(.integer(Int64(clamping: notifications.firstLiveID)))
                }
                var cursor = JSONObject()
                cursor["cursor"] = .int(Int64(clamping: notifications.cursor))
                cursor["next_id"] = .int(Int64(clamping: notifications.nextID))
                try meta("notifications", .object(cursor))
            }
            if let last = batch.events.last { lastSequence = max(lastSequence, Int64(clamping: last.sequence)) }
        }
        writtenSinceCompaction += Int64(batch.events.count)
    }

    /// Folds the WAL into the file and closes it (the writer's last act): a stopped mock's file
    /// is whole on its own, to copy or to open with `state` commands.
    func close() {
        // What this run wrote is compacted too, for `closingCompactionSeconds` at most: a file
        // used by many short runs stays bounded, and a stop is never held long.
        if writtenSinceCompaction > 0 && compaction == nil { startCompaction() }
        let deadline = ContinuousClock.now + .milliseconds(Int64(Self.closingCompactionSeconds * 1000))
        while compaction != nil && ContinuousClock.now < deadline {
            guard (try? compactStep()) != nil else { break }
        }
        insertEvent = nil
        upsertNotification = nil
        setMeta = nil
        try? database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        database.close()
        // After SQLite let go of the file: closing a descriptor of it earlier would drop SQLite's locks.
        lock.release()
    }

    // MARK: - Compaction

    /// Whether compaction has work: one under way, or `keptEvents` written since the last.
    var compactionDue: Bool { compaction != nil || writtenSinceCompaction >= Self.keptEvents }

    /// Begins a compaction of what is older than the newest `keptEvents`; nothing to do when
    /// nothing is that old.
    private func startCompaction() {
        writtenSinceCompaction = 0
        let cutoff = lastSequence - Self.keptEvents
        guard cutoff > 0 else { return }
        compaction = (cutoff, 0)
    }

    /// One step of compaction, in its own transaction: drops, among at most `compactionStep`
    /// events at or before the cutoff, those no later state needs — the inert ones (tokens
    /// issued, faults fired), a code's issue together with its redemption (both at once, so
    /// the file is whole after every step), and the issue of a code a later `codes-expired`
    /// dropped. Consents, revocations, keys, users, the clock, transfers and resets stay:
    /// replaying what is left gives the same world. Every statement seeks by sequence or by the
    /// code index (`queryPlans` is the check): the whole compaction is linear in the
    /// events it looks through. Returns whether it is done.
    @discardableResult
    func compactStep() throws(SQLiteError) -> Bool {
        if compaction == nil { startCompaction() }
        guard let (cutoff, done) = compaction else { return true }
        try database.transaction { () throws(SQLiteError) in
            if done == 0 { try prepareReach() }
            let end = try database.prepare("SELECT sequence FROM events WHERE sequence > ?1 AND sequence <= ?2 ORDER BY sequence LIMIT 1 OFFSET ?3")
            try end.bind(.integer(done), .integer(cutoff), .integer(Self.compactionStep - 1))
            let upTo = try end.step() ? end.integer(0) : cutoff
            compactionSteps += end.steps
            for sql in Self.compactionStatements {
                let statement = try database.prepare(sql)
                try statement.run(.integer(done), .integer(upTo))
                compactionSteps += statement.steps
            }
            compaction = upTo >= cutoff ? nil : (cutoff, upTo)
        }
        return compaction == nil
    }

    /// A compaction's statements over the events after ?1 up to ?2.
    static let compactionStatements = [
        "DELETE FROM events WHERE sequence > ?1 AND sequence <= ?2 AND type IN ('tokens-issued', 'fault-fired')",
        // A redemption in the range takes its code's issue along (the issue is always earlier).
        "DELETE FROM events WHERE sequence <= ?2 AND code IN (SELECT code FROM events WHERE sequence > ?1 AND sequence <= ?2 AND type = 'code-redeemed')",
        // An issue in the range goes when a later codes-expired reached its expiry: the reach
        // table holds, for each codes-expired, the latest expiry it or any later one dropped.
        """
        DELETE FROM events WHERE sequence > ?1 AND sequence <= ?2 AND type = 'code-issued' AND expires <=
          (SELECT reach FROM temp.compaction_reach AS later WHERE later.sequence > events.sequence ORDER BY later.sequence LIMIT 1)
        """,
    ]

    /// Fills the reach table for a new compaction: one pass over the events.
    private func prepareReach() throws(SQLiteError) {
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS compaction_reach(sequence INTEGER PRIMARY KEY, reach INTEGER NOT NULL); DELETE FROM temp.compaction_reach")
        let fill = try database.prepare("""
            INSERT INTO temp.compaction_reach(sequence, reach)
              SELECT sequence, max(expires) OVER (ORDER BY sequence DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
              FROM events WHERE type = 'codes-expired'
            """)
        try fill.run()
        compactionSteps += fill.steps
    }

    /// SQLite's steps for `sql` over the events after `from` up to `upTo`, run and rolled back
    /// (for the tests: compaction's cost against a statement's).
    func steps(of sql: String, from: Int64, upTo: Int64) throws(SQLiteError) -> Int64 {
        try database.execute("BEGIN IMMEDIATE")
        defer { try? database.execute("ROLLBACK") }
        let statement = try database.prepare(sql)
        try statement.run(.integer(from), .integer(upTo))
        return statement.steps
    }

    /// `EXPLAIN QUERY PLAN` of each statement (by default compaction's; for the tests: every
    /// table is read by a key or an index, none scanned per row).
    func queryPlans(_ statements: [String] = compactionStatements) throws(SQLiteError) -> [[String]] {
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS compaction_reach(sequence INTEGER PRIMARY KEY, reach INTEGER NOT NULL)")
        return try statements.map { sql throws(SQLiteError) in
            let plan = try database.prepare("EXPLAIN QUERY PLAN " + sql)
            try plan.bind(.integer(0), .integer(0))
            var details: [String] = []
            while try plan.step() { details.append(plan.text(3) ?? "") }
            return details
        }
    }

    /// The columns compaction reads: a code's value, and its expiry (a code's) or the instant
    /// codes expired by (`codes-expired`).
    private static func compactionKeys(_ event: DomainEvent) -> (code: String?, expires: Int64?) {
        switch event {
        case .codeIssued(let code, let grant): (code, grant.expiresAt)
        case .codeRedeemed(let code, _, _, _): (code, nil)
        case .codesExpired(let at, _): (nil, at)
        default: (nil, nil)
        }
    }

    private func meta(_ key: String, _ value: JSONValue) throws(SQLiteError) {
        if setMeta == nil { setMeta = try database.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)") }
        try setMeta?.run(.text(key), .text(Self.text(value)))
    }

    private static func text(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.compact(value), as: UTF8.self)
    }

    // MARK: - Reading

    /// Everything the file holds, decoded; a row that does not decode names itself. Nil for a
    /// file made but never begun (no genesis, no event: a start that stopped in between).
    private static func read(_ database: SQLiteDatabase, path: String) throws -> StoredState? {
        func parse(_ text: String, _ place: String) throws(StateFileError) -> JSONValue {
            do {
                return try JSONParser.parse(text)
            } catch {
                throw StateFileError(path: path, problem: .damaged("\(place): not JSON (\(error))"))
            }
        }
        func decoded<T>(_ place: String, _ body: () throws(StoredStateError) -> T) throws(StateFileError) -> T {
            do {
                return try body()
            } catch {
                throw StateFileError(path: path, problem: .damaged("\(place): \(error)"))
            }
        }
        var meta: [String: String] = [:]
        let metaRows = try database.prepare("SELECT key, value FROM meta")
        while try metaRows.step() { meta[metaRows.text(0) ?? ""] = metaRows.text(1) ?? "" }
        guard let genesisText = meta["genesis"] else {
            guard try database.integer("SELECT count(*) FROM events") == 0 else { throw StateFileError(path: path, problem: .damaged("no genesis record")) }
            return nil
        }
        let genesisJSON = try parse(genesisText, "genesis")
        let genesis = try decoded("genesis") { () throws(StoredStateError) in try StateGenesis(stored: genesisJSON, path: "genesis") }
        /// A seeded stream's position stored under `key`, when there is one.
        func position(_ key: String) throws(StateFileError) -> SeededRandom.Position? {
            guard let text = meta[key] else { return nil }
            let json = try parse(text, key)
            return try decoded(key) { () throws(StoredStateError) in try SeededRandom.Position(stored: json, path: key) }
        }
        let random = try position("random")
        let keyOrder = try position("jwks_order")
        var events: [MockState.RecordedEvent] = []
        let rows = try database.prepare("SELECT sequence, at, body FROM events ORDER BY sequence")
        while try rows.step() {
            let sequence = rows.integer(0)
            guard StoredRange.counters.contains(sequence) else {
                throw StateFileError(path: path, problem: .damaged("event \(sequence): sequence \(StoredRange.expectation(StoredRange.counters))"))
            }
            let at = rows.real(1)
            guard StoredRange.instants.contains(at) else {
                throw StateFileError(path: path, problem: .damaged("event \(sequence): at \(StoredRange.expectation(StoredRange.instants, "a number of seconds"))"))
            }
            let json = try parse(rows.text(2) ?? "", "event \(sequence)")
            let event = try decoded("event \(sequence)") { () throws(StoredStateError) in try DomainEvent(stored: json, path: "event") }
            events.append(MockState.RecordedEvent(sequence: UInt64(sequence), at: at, event: event))
        }
        var notifications = StoredNotifications()
        if let text = meta["notifications"] {
            let json = try parse(text, "notifications")
            guard case .object(let cursor) = json, case .int(let at)? = cursor["cursor"], case .int(let next)? = cursor["next_id"],
                  StoredRange.counts.contains(at), StoredRange.counters.contains(next) else {
                throw StateFileError(path: path, problem: .damaged("notifications: expected {\"cursor\": n, \"next_id\": n} with n "
                                                                   + "from 0 (cursor) or 1 (next_id) to \(StoredRange.counters.upperBound)"))
            }
            notifications.cursor = UInt64(at)
            notifications.nextID = UInt64(next)
        }
        let records = try database.prepare("SELECT id, body FROM notifications ORDER BY id")
        while try records.step() {
            let id = records.integer(0)
            let json = try parse(records.text(1) ?? "", "notification \(id)")
            notifications.records.append(try decoded("notification \(id)") { () throws(StoredStateError) in
                try NotificationRecord(stored: json, path: "notification")
            })
        }
        return StoredState(genesis: genesis, random: random, keyOrder: keyOrder, events: events, notifications: notifications)
    }
}

/// What a state file held at start: enough to rebuild the mock as it was.
struct StoredState: Sendable {
    /// The mock's beginning.
    var genesis: StateGenesis
    /// The seeded stream's position after the last event (seeded runs only).
    var random: SeededRandom.Position?
    /// Where the seeded stream of `/auth/keys` orders stood at the last commit (seeded runs that
    /// served the keys shuffled only).
    var keyOrder: SeededRandom.Position?
    /// Every event kept, in sequence order.
    var events: [MockState.RecordedEvent]
    /// The notification log.
    var notifications: StoredNotifications
}

/// The notification log as stored: the records, the deliverer's cursor and next id.
struct StoredNotifications: Sendable {
    /// The last event the deliverer turned into records.
    var cursor: UInt64 = 0
    /// The id the next record gets.
    var nextID: UInt64 = 1
    /// The records, ids ascending.
    var records: [NotificationRecord] = []
}

/// The notification log's changes since the last commit.
struct NotificationChanges: Sendable {
    /// Records new or changed.
    var records: [NotificationRecord] = []
    /// Whether the stored log is replaced by `records` (the log was cleared).
    var replaceAll = false
    /// Records below this id left the log.
    var firstLiveID: UInt64 = 1
    /// Records that left the log from its middle.
    var removed: [UInt64] = []
    /// The deliverer's cursor and next id.
    var cursor: UInt64 = 0
    var nextID: UInt64 = 1
}

/// One commit's worth of changes.
struct StateBatch: Sendable {
    /// Events recorded since the last commit, in sequence order.
    var events: [MockState.RecordedEvent] = []
    /// The seeded stream's position after them.
    var random: SeededRandom.Position?
    /// Where the seeded stream of `/auth/keys` orders stands, when it moved since the last commit.
    var keyOrder: SeededRandom.Position?
    /// The notification log's changes.
    var notifications: NotificationChanges?

    /// Whether there is nothing to commit.
    var isEmpty: Bool { events.isEmpty && random == nil && keyOrder == nil && notifications == nil }
}

import FoundationEssentials
import JOSE

/// The state file of `serve --state FILE`: a SQLite database in WAL mode holding what a restart
/// must not forget. It stores the mock's beginning (`StateGenesis`: MAC secret, clock, start,
/// the keys it began with) and every event since, in one sequence (each carries its whole effect,
/// so the scenario, the genesis and the events rebuild the same `World`; the delivery events among
/// them — each attempt at a notification, a cleared log — rebuild the delivery log with them),
/// and the seeded streams' positions (the events', the faults' and `/auth/keys` orders').
/// It holds events only: nothing is derived and stored beside them. It is written, never queried,
/// while the mock runs: the writer commits batches, and reads happen once, at start.
///
/// One mock holds a file at a time: a `StateFileLock` taken before SQLite opens the file, and the
/// connection's exclusive lock from its first write until it closes, so a second mock (or
/// `state` command) on the same file is refused at once, and of two starting at the same moment
/// exactly one serves.
final class StateFile: @unchecked Sendable {
    /// The schema this build writes and the newest it reads.
    static let schemaVersion: Int64 = 3
    /// `PRAGMA application_id`: "AIDM", so another program's SQLite file is told apart.
    static let applicationID: Int64 = 0x4149_444D
    /// The newest events are kept whole for the event feed; older ones that no later state needs
    /// are dropped (see `compactStep`).
    static let keptEvents: Int64 = 10_000
    /// Events one compaction step looks through: a step is its own short transaction, between
    /// the writer's commits, never inside one (a compaction in the writer's transaction
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
        // Version 2: the delivery log is a record of events (`deliveries`, beside `events`), not a
        // table of records; a version 1 file's records are taken over as `notification-imported`
        // events (`migrateNotifications`) before its table goes.
        """
        CREATE TABLE deliveries(sequence INTEGER PRIMARY KEY, cursor INTEGER NOT NULL, id INTEGER NOT NULL, body TEXT NOT NULL);
        CREATE INDEX deliveries_id ON deliveries(id);
        """,
        // Version 3: delivery events are events, in the one sequence; each names its notification
        // (`notification`, what compaction forgets by). A version 1 or 2 file's delivery events
        // are merged into its events (`RecordedDelivery.Merge`) and written again in the same
        // transaction, after the table they came from went.
        """
        ALTER TABLE events ADD COLUMN notification INTEGER;
        CREATE INDEX events_notification ON events(notification) WHERE notification IS NOT NULL;
        DROP TABLE deliveries;
        """,
    ]

    /// Most delivery events kept behind the newest notification: older ones are forgotten by
    /// compaction (and the file says up to which id: `deliveries_forgotten`); the log keeps the
    /// newest 10,000 records.
    static let keptNotifications: Int64 = 2 * Int64(NotificationDeliverer.logCapacity)

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
    private var setMeta: SQLiteStatement?
    private var writtenSinceCompaction: Int64 = 0
    /// The newest event's sequence number in the file.
    private var lastSequence: Int64 = 0
    /// A compaction under way: events at or before `cutoff` are looked through in steps, those
    /// after `done` still to come.
    private var compaction: (cutoff: Int64, done: Int64)?
    /// Notifications up to this id had their delivery events dropped by compaction.
    private var forgottenThrough: Int64 = 0
    /// SQLite's steps in compaction since the file was opened: its cost, machine-independent.
    private(set) var compactionSteps: Int64 = 0

    /// Opens (or creates) the state file at `path` for a mock serving the scenario whose pretty
    /// JSON is `scenarioJSON`, takes its lock and reads what it holds. Refused — the file left as
    /// it was — when it is in use, damaged, newer than this build, another program's, or the
    /// state of another scenario. `readOnly` reads and holds the file without writing to it;
    /// with it, a nil `scenarioJSON` takes the file's own scenario.
    /// `pause` reaches `StateFileLock`'s steps (tests force interleavings with it).
    init(path: String, scenarioJSON: String?, readOnly: Bool = false,
         pause: (StateFileLock.Step) -> Void = { _ in }) throws(StateFileError) {
        self.path = path
        self.scenarioJSON = scenarioJSON ?? ""
        let exists = FileManager.default.fileExists(atPath: path)
        if readOnly && !exists { throw StateFileError(path: path, problem: .missing) }
        if exists && BoundedFile.isDirectory(path) { throw StateFileError(path: path, problem: .notAFile) }
        do {
            lock = try StateFileLock(path: path, create: !readOnly && !exists, pause: pause)
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
                if version < 2 { try database.execute("DROP TABLE notifications; DELETE FROM meta WHERE key = 'notifications'") }
                if version < 3, let stored, stored.events.contains(where: \.isDelivery) { try rewrite(stored.events) }
                try database.execute("PRAGMA application_id=\(Self.applicationID); PRAGMA user_version=\(Self.schemaVersion)")
                try database.prepare("INSERT OR REPLACE INTO meta(key, value) VALUES('scenario', ?1)").run(.text(self.scenarioJSON))
            }
            // Rows written by earlier runs count toward the next compaction.
            writtenSinceCompaction = try database.integer("SELECT count(*) FROM events") ?? 0
            lastSequence = try database.integer("SELECT max(sequence) FROM events") ?? 0
            forgottenThrough = Int64(clamping: stored?.forgottenThrough ?? 0)
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

    /// Commits `batch` in one transaction: its events, the seeded streams' positions after them.
    /// Durable when it returns (WAL, synchronous=FULL).
    func write(_ batch: StateBatch) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in
            try insert(batch.events)
            if let random = batch.random { try meta("random", random.stored) }
            if let faultRandom = batch.faultRandom { try meta("fault_random", faultRandom.stored) }
            if let keyOrder = batch.keyOrder { try meta("jwks_order", keyOrder.stored) }
            if let last = batch.events.last { lastSequence = max(lastSequence, Int64(clamping: last.sequence)) }
        }
        writtenSinceCompaction += Int64(batch.events.count)
    }

    /// Inserts events (in the caller's transaction), with the columns compaction reads.
    private func insert(_ events: [RecordedEvent]) throws(SQLiteError) {
        if insertEvent == nil {
            insertEvent = try database.prepare(
                "INSERT OR REPLACE INTO events(sequence, at, type, code, expires, notification, body) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)")
        }
        for recorded in events {
            let (code, expires) = Self.compactionKeys(recorded.event)
            var notification = SQLiteValue.null
            if case .delivery(let delivery) = recorded.event { notification = .integer(Int64(clamping: delivery.notificationID)) }
            try insertEvent?.run(.integer(Int64(clamping: recorded.sequence)), .real(recorded.at), .text(recorded.event.name),
                                 code.map(SQLiteValue.text) ?? .null, expires.map(SQLiteValue.integer) ?? .null, notification,
                                 .text(Self.text(recorded.event.stored)))
        }
    }

    /// Writes a version 1 or 2 file's events again as `read` merged them, its delivery events
    /// among them (in the migration's transaction).
    private func rewrite(_ events: [RecordedEvent]) throws(SQLiteError) {
        try database.execute("DELETE FROM events")
        try insert(events)
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
    /// issued, faults fired), a count a later event carries on (a `times` fault's firings, a
    /// token's refreshes), a code's issue together with its redemption (both at once, so
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
            if done == 0 {
                try prepareReach()
                try forgetOldDeliveries()
            }
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
        // The inert kinds go; a `times` fault's firings stay (they carry its firings left, and a
        // compaction code), other faults' are inert.
        "DELETE FROM events WHERE sequence > ?1 AND sequence <= ?2 AND (type IN (\(typeList(.inert))) OR (type IN (\(typeList(.inertUnlessCounting))) AND code IS NULL))",
        // A count (a `times` fault's firings, a token's refreshes) goes once a later one of the
        // same code carries it on.
        """
        DELETE FROM events WHERE sequence > ?1 AND sequence <= ?2 AND type IN (\(typeList(.inertUnlessCounting))) AND code IS NOT NULL
          AND EXISTS (SELECT 1 FROM events AS later WHERE later.code = events.code AND later.sequence > events.sequence)
        """,
        // A redemption in the range takes its code's issue along (the issue is always earlier).
        "DELETE FROM events WHERE sequence <= ?2 AND code IN (SELECT code FROM events WHERE sequence > ?1 AND sequence <= ?2 AND type = '\(DomainEvent.Kind.codeRedeemed.rawValue)')",
        // An issue in the range goes when a later codes-expired reached its expiry: the reach
        // table holds, for each codes-expired, the latest expiry it or any later one dropped.
        """
        DELETE FROM events WHERE sequence > ?1 AND sequence <= ?2 AND type = '\(DomainEvent.Kind.codeIssued.rawValue)' AND expires <=
          (SELECT reach FROM temp.compaction_reach AS later WHERE later.sequence > events.sequence ORDER BY later.sequence LIMIT 1)
        """,
    ]

    /// The quoted names of the kinds compaction treats as `compaction`, for an SQL `IN (…)`
    /// (`'-'` when none: no event's type).
    static func typeList(_ compaction: DomainEvent.Compaction) -> String {
        let names = DomainEvent.Kind.allCases.filter { $0.compaction == compaction }.map { "'\($0.rawValue)'" }
        return names.isEmpty ? "'-'" : names.joined(separator: ", ")
    }

    /// Drops the delivery events of notifications more than `keptNotifications` behind the newest
    /// (the log let go of them long ago), and says so in the file, so a restart skips the records
    /// their account events would queue (`StoredState.forgottenThrough`). Seeks by the
    /// notification index.
    private func forgetOldDeliveries() throws(SQLiteError) {
        let newest = try database.integer("SELECT max(notification) FROM events") ?? 0
        let through = newest - Self.keptNotifications
        guard through > forgottenThrough else { return }
        let drop = try database.prepare("DELETE FROM events WHERE notification <= ?1")
        try drop.run(.integer(through))
        compactionSteps += drop.steps
        forgottenThrough = through
        try meta("deliveries_forgotten", .int(through))
    }

    /// Fills the reach table for a new compaction: one pass over the events.
    private func prepareReach() throws(SQLiteError) {
        try database.execute("CREATE TEMP TABLE IF NOT EXISTS compaction_reach(sequence INTEGER PRIMARY KEY, reach INTEGER NOT NULL); DELETE FROM temp.compaction_reach")
        let fill = try database.prepare("""
            INSERT INTO temp.compaction_reach(sequence, reach)
              SELECT sequence, max(expires) OVER (ORDER BY sequence DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
              FROM events WHERE type = '\(DomainEvent.Kind.codesExpired.rawValue)'
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
        case .faultFired(let firing) where firing.remaining != nil: ("fault \(firing.faultID)", nil)
        case .refreshCounted(let counted): ("refresh \(counted.token.consentID) \(counted.token.clientID) \(counted.token.issuedAt)", nil)
        default: (nil, nil)
        }
    }

    /// Says notifications up to `through` had their delivery events dropped (an import of an
    /// export that says so).
    func setForgotten(through: UInt64) throws(SQLiteError) {
        try database.transaction { () throws(SQLiteError) in try meta("deliveries_forgotten", .int(Int64(clamping: through))) }
        forgottenThrough = Int64(clamping: through)
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
        let faultRandom = try position("fault_random")
        let keyOrder = try position("jwks_order")
        var events: [RecordedEvent] = []
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
            events.append(RecordedEvent(sequence: UInt64(sequence), at: at, event: event))
        }
        let lastSequence = events.last?.sequence ?? 0
        // A version 1 or 2 file's delivery events, in their own sequence, to merge into the events.
        var deliveries: [RecordedDelivery] = []
        let tables = try database.texts("SELECT name FROM sqlite_schema WHERE type = 'table'")
        if tables.contains("deliveries") {
            let rows = try database.prepare("SELECT sequence, cursor, body FROM deliveries ORDER BY sequence")
            while try rows.step() {
                let sequence = rows.integer(0)
                let cursor = rows.integer(1)
                guard StoredRange.counters.contains(sequence), (0...Int64(clamping: lastSequence)).contains(cursor),
                      Int64(clamping: deliveries.last?.cursor ?? 0) <= cursor else {
                    throw StateFileError(path: path, problem: .damaged("delivery \(sequence): sequence and cursor out of order or range"))
                }
                let json = try parse(rows.text(2) ?? "", "delivery \(sequence)")
                let event = try decoded("delivery \(sequence)") { () throws(StoredStateError) in try DeliveryEvent(stored: json, path: "delivery") }
                deliveries.append(RecordedDelivery(sequence: UInt64(sequence), cursor: UInt64(cursor), event: event))
            }
        }
        if tables.contains("notifications") {
            // A version 1 file: its stored records, taken over as events at the stored cursor.
            var cursor: UInt64 = 0
            if let text = meta["notifications"] {
                let json = try parse(text, "notifications")
                guard case .object(let fields) = json, case .int(let at)? = fields["cursor"], (0...Int64(clamping: lastSequence)).contains(at) else {
                    throw StateFileError(path: path, problem: .damaged("notifications: expected {\"cursor\": n, …} with n from 0 to the last event's sequence"))
                }
                cursor = UInt64(at)
            }
            let records = try database.prepare("SELECT id, body FROM notifications ORDER BY id")
            while try records.step() {
                let id = records.integer(0)
                let json = try parse(records.text(1) ?? "", "notification \(id)")
                let record = try decoded("notification \(id)") { () throws(StoredStateError) in try NotificationRecord(stored: json, path: "notification") }
                deliveries.append(RecordedDelivery(sequence: UInt64(deliveries.count + 1), cursor: cursor, event: .imported(record)))
            }
        }
        var forgottenThrough: UInt64 = 0
        if let text = meta["deliveries_forgotten"] {
            guard case .int(let through) = try parse(text, "deliveries_forgotten"), StoredRange.counts.contains(through) else {
                throw StateFileError(path: path, problem: .damaged("deliveries_forgotten: \(StoredRange.expectation(StoredRange.counts))"))
            }
            forgottenThrough = UInt64(through)
        }
        return StoredState(genesis: genesis, random: random, faultRandom: faultRandom, keyOrder: keyOrder,
                           events: RecordedDelivery.Merge.merged(events, deliveries), forgottenThrough: forgottenThrough)
    }
}

/// What a state file held at start: enough to rebuild the mock as it was.
struct StoredState: Sendable {
    /// The mock's beginning.
    var genesis: StateGenesis
    /// The seeded stream's position after the last event (seeded runs only).
    var random: SeededRandom.Position?
    /// The fault stream's position after the last event (seeded runs only).
    var faultRandom: SeededRandom.Position?
    /// Where the seeded stream of `/auth/keys` orders stood at the last commit (seeded runs that
    /// served the keys shuffled only).
    var keyOrder: SeededRandom.Position?
    /// Every event kept, in sequence order, the delivery events among them (an older file's
    /// merged in; a version 1 file's records as `notification-imported` events).
    var events: [RecordedEvent]
    /// Notifications up to this id had their delivery events dropped by compaction: a rebuilt
    /// log skips them.
    var forgottenThrough: UInt64 = 0
}

/// One commit's worth of changes.
struct StateBatch: Sendable {
    /// Events recorded since the last commit, in sequence order.
    var events: [RecordedEvent] = []
    /// The seeded streams' positions after them.
    var random: SeededRandom.Position?
    var faultRandom: SeededRandom.Position?
    /// Where the seeded stream of `/auth/keys` orders stands, when it moved since the last commit.
    var keyOrder: SeededRandom.Position?

    /// Whether there is nothing to commit.
    var isEmpty: Bool { events.isEmpty && random == nil && faultRandom == nil && keyOrder == nil }

    /// `later`'s changes added to these (not committed yet).
    mutating func merge(_ later: StateBatch) {
        events += later.events
        random = later.random ?? random
        faultRandom = later.faultRandom ?? faultRandom
        keyOrder = later.keyOrder ?? keyOrder
    }
}

import CSQLite

/// One SQLite connection: the only owner of a `sqlite3*` (closed in `deinit`) and, with
/// `SQLiteStatement`, the one place the mock calls SQLite (house style rule 4, as JOSE's
/// `EVPKey` is for OpenSSL). Used by one thread at a time — the state file's opener, then its
/// writer — which is what `@unchecked Sendable` promises; SQLite is opened without its own
/// mutexes for that reason.
final class SQLiteDatabase: @unchecked Sendable {
    private let handle: OpaquePointer
    /// The file's path, for messages.
    let path: String

    /// Opens `path` read-write; creates it when `create`, else a missing file is an error.
    init(path: String, create: Bool) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &opened, flags, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(opened)
            throw SQLiteError(code: code, message: message, call: "open")
        }
        handle = opened
        self.path = path
        // Another connection holding the file answers SQLITE_BUSY at once: a second mock on the
        // same file must fail fast, not wait.
        sqlite3_busy_timeout(handle, 0)
        sqlite3_extended_result_codes(handle, 1)
        // Looking at a file changes nothing, not even on close, until `checkpointOnClose(true)`.
        shim_sqlite3_checkpoint_on_close(handle, 0)
    }

    /// Whether closing folds the WAL into the file (off from open until the file is accepted).
    func checkpointOnClose(_ on: Bool) {
        shim_sqlite3_checkpoint_on_close(handle, on ? 1 : 0)
    }

    /// Whether `close()` ran.
    private var closed = false

    deinit {
        if !closed { sqlite3_close_v2(handle) }
    }

    /// Closes the connection (its statements must be gone); later calls fail with SQLITE_MISUSE.
    func close() {
        guard !closed else { return }
        closed = true
        sqlite3_close_v2(handle)
    }

    /// Frees what SQLite caches for this connection (pages read at start).
    func releaseMemory() {
        sqlite3_db_release_memory(handle)
    }

    /// Runs `sql` (one or more statements, no parameters, no rows wanted).
    func execute(_ sql: String) throws(SQLiteError) {
        guard !closed else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed", call: "exec") }
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, "exec") }
    }

    /// A prepared statement for `sql`.
    func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        guard !closed else { throw SQLiteError(code: SQLITE_MISUSE, message: "the connection is closed", call: "prepare") }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, "prepare") }
        return SQLiteStatement(statement, database: self)
    }

    /// The first column of the first row of `sql` as an integer (nil without a row).
    func integer(_ sql: String) throws(SQLiteError) -> Int64? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.integer(0)
    }

    /// The rows of `sql`'s first column as text.
    func texts(_ sql: String) throws(SQLiteError) -> [String] {
        let statement = try prepare(sql)
        var rows: [String] = []
        while try statement.step() { rows.append(statement.text(0) ?? "") }
        return rows
    }

    /// Runs `body` in one transaction (`BEGIN IMMEDIATE` … `COMMIT`), rolled back when it throws.
    func transaction(_ body: () throws(SQLiteError) -> Void) throws(SQLiteError) {
        try execute("BEGIN IMMEDIATE")
        do {
            try body()
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// The error for `code` from `call`, with SQLite's message for this connection.
    func error(_ code: Int32, _ call: String) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)), call: call)
    }
}

/// A prepared statement of one `SQLiteDatabase` (finalized in `deinit`). Parameters are
/// numbered from 1, columns from 0, as in SQLite.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase

    fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit {
        sqlite3_finalize(statement)
    }

    /// Binds `values` to parameters 1, 2, … after clearing the previous run.
    func bind(_ values: SQLiteValue...) throws(SQLiteError) {
        try bind(values)
    }

    private func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
        for (offset, value) in values.enumerated() { try bindOne(value, at: offset) }
    }

    /// Steps once: true while there is a row to read, false when done.
    @discardableResult
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(statement)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            sqlite3_reset(statement)
            throw database.error(code, "step")
        }
    }

    /// Binds `values` and runs the statement to its end.
    func run(_ values: SQLiteValue...) throws(SQLiteError) {
        try bind(values)
        while try step() {}
    }

    private func bindOne(_ value: SQLiteValue, at offset: Int) throws(SQLiteError) {
        let index = Int32(offset + 1)
        let code: Int32
        switch value {
        case .null: code = sqlite3_bind_null(statement, index)
        case .integer(let integer): code = sqlite3_bind_int64(statement, index, integer)
        case .real(let real): code = sqlite3_bind_double(statement, index, real)
        case .text(let text):
            var text = text
            code = text.withUTF8 { buffer in
                guard buffer.count < Int32.max else { return SQLITE_TOOBIG }
                return buffer.baseAddress.map { base in
                    base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { shim_sqlite3_bind_text(statement, index, $0, Int32(buffer.count)) }
                } ?? shim_sqlite3_bind_text(statement, index, "", 0)
            }
        }
        guard code == SQLITE_OK else { throw database.error(code, "bind") }
    }

    /// Virtual-machine steps this statement has run since it was prepared: what its work is,
    /// counted the same on every machine.
    var steps: Int64 { Int64(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_VM_STEP, 0)) }

    /// Column `index` of the current row as an integer.
    func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(statement, index) }

    /// Column `index` of the current row as a double.
    func real(_ index: Int32) -> Double { sqlite3_column_double(statement, index) }

    /// Whether column `index` of the current row is NULL.
    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    /// Column `index` of the current row as text (nil when NULL).
    func text(_ index: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, index) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }
}

/// A value bound to a statement's parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
}

/// What SQLite refused: its (extended) result code, its message and the call.
struct SQLiteError: Error, Equatable, Sendable, CustomStringConvertible {
    /// SQLite's extended result code.
    var code: Int32
    /// SQLite's message.
    var message: String
    /// Which call failed (`open`, `prepare`, `step`, …).
    var call: String

    /// Another connection holds the file (SQLITE_BUSY or SQLITE_LOCKED, any extended code).
    var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }
    /// The file is not a database, or a damaged one.
    var isDamaged: Bool { code & 0xFF == SQLITE_NOTADB || code & 0xFF == SQLITE_CORRUPT }

    /// `message (SQLite code N in call)`.
    var description: String { "\(message) (SQLite code \(code) in \(call))" }
}

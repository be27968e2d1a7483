#ifndef APPLEIDMOCK_CSQLITE_SHIM_H
#define APPLEIDMOCK_CSQLITE_SHIM_H

// The only C AppleIDMock's state file (State/SQLiteDatabase.swift) sees. SQLITE_TRANSIENT is a
// macro over a cast of -1 to a function pointer, and sqlite3_db_config is variadic: Swift
// imports neither.

#include <sqlite3.h>

/// Binds text that SQLite copies at once (SQLITE_TRANSIENT).
static inline int shim_sqlite3_bind_text(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

/// Binds bytes that SQLite copies at once (SQLITE_TRANSIENT).
static inline int shim_sqlite3_bind_blob(sqlite3_stmt *statement, int index, const void *bytes, int length) {
    return sqlite3_bind_blob(statement, index, bytes, length, SQLITE_TRANSIENT);
}

/// Whether closing the connection folds the WAL into the file (sqlite3_db_config is variadic).
/// Off while a file is only looked at, so refusing one leaves it exactly as it was.
static inline int shim_sqlite3_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on ? 0 : 1, (int *)0);
}

#endif

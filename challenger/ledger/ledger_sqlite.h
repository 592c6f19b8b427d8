// A thin RAII layer over the SQLite C API for the ledger (challenger/ledger/ledger.h): one connection,
// prepared statements, and SQLite result codes turned into Status. Nothing ledger-specific lives
// here except the error wording.
//
// Error mapping (SqliteError):
//   SQLITE_FULL, or an I/O error whose errno is ENOSPC/EDQUOT
//                                  -> RESOURCE_EXHAUSTED "ledger disk full: refusing new sessions (...)"
//   SQLITE_BUSY / SQLITE_LOCKED    -> UNAVAILABLE (another connection holds the write lock)
//   SQLITE_CORRUPT -> DATA_LOSS; SQLITE_NOTADB -> INVALID_ARGUMENT "FILE is not a wipeproof ledger (SQLite)"
//   SQLITE_READONLY / SQLITE_PERM / SQLITE_AUTH -> PERMISSION_DENIED
//   SQLITE_CANTOPEN                -> NOT_FOUND
//   anything else                  -> INTERNAL
// Every message carries what was being done and sqlite3_errmsg().
//
// Thread-safety: none. A LedgerDb and its statements are used by one thread at a time (Ledger
// serialises access with its own mutex).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

// Converts a failed SQLite result code of `db` into a Status; `what` says what was being done.
// REQUIRES: rc is not SQLITE_OK, SQLITE_ROW or SQLITE_DONE.
Status SqliteError(sqlite3* db, int rc, const std::string& what);

// One prepared statement. Movable; finalised when destroyed.
class LedgerStmt {
 public:
  LedgerStmt() = default;

  // Parameters are 1-based, as in sqlite3_bind_*. Blobs are copied (SQLITE_TRANSIENT).
  Status BindInt64(int index, int64_t value);
  Status BindBlob(int index, proto::ByteView value);
  Status BindText(int index, const std::string& value);
  // Runs one step: true when a row is ready, false when the statement is done.
  StatusOr<bool> Step();
  // Runs the statement to completion, ignoring any rows.
  Status Run();
  // Resets the statement and clears its bindings so it can run again.
  void Reset();

  // Columns of the current row (0-based). ColumnBlob's view is valid until the next Step/Reset.
  int64_t ColumnInt64(int column) const;
  proto::ByteView ColumnBlob(int column) const;
  std::string ColumnText(int column) const;

 private:
  friend class LedgerDb;
  struct Finalizer {
    void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
  };
  LedgerStmt(sqlite3* db, sqlite3_stmt* stmt, std::string sql) : db_(db), stmt_(stmt), sql_(std::move(sql)) {}

  sqlite3* db_ = nullptr;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;  // for error messages
};

// One SQLite connection. Closed when destroyed.
class LedgerDb {
 public:
  // Opens `path`. read_only: SQLITE_OPEN_READONLY, and the file must exist (NOT_FOUND otherwise);
  // else SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE.
  static StatusOr<std::unique_ptr<LedgerDb>> Open(const std::string& path, bool read_only);
  ~LedgerDb();
  LedgerDb(const LedgerDb&) = delete;
  LedgerDb& operator=(const LedgerDb&) = delete;

  // Runs one or more statements that return no rows needed by the caller.
  Status Exec(const std::string& sql);
  StatusOr<LedgerStmt> Prepare(const std::string& sql);
  // The first column of the first row of `sql` as an integer (PRAGMA values, COUNT(*)).
  StatusOr<int64_t> QueryInt64(const std::string& sql);
  // The first column of the first row of `sql` as text ("" when there is no row).
  StatusOr<std::string> QueryText(const std::string& sql);

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  LedgerDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// Runs ROLLBACK when destroyed unless Commit() succeeded, so every early return out of a write
// transaction leaves the ledger as it was.
class LedgerTransaction {
 public:
  // immediate: BEGIN IMMEDIATE (takes the write lock now, so the tail read inside the transaction
  // is the tail the new entry is written after); otherwise BEGIN (a read snapshot).
  static StatusOr<LedgerTransaction> Begin(LedgerDb* db, bool immediate);
  LedgerTransaction(LedgerTransaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  LedgerTransaction& operator=(LedgerTransaction&&) = delete;
  ~LedgerTransaction();
  Status Commit();

 private:
  explicit LedgerTransaction(LedgerDb* db) : db_(db) {}
  LedgerDb* db_;  // null once committed or rolled back
};

}  // namespace wipeproof

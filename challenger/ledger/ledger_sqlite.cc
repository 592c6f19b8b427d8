#include "challenger/ledger/ledger_sqlite.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace wipeproof {

Status SqliteError(sqlite3* db, int rc, const std::string& what) {
  const std::string detail = what + ": sqlite: " + (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) +
                             " (code " + std::to_string(db != nullptr ? sqlite3_extended_errcode(db) : rc) + ")";
  const int primary = rc & 0xff;
  const int sys_errno = db != nullptr ? sqlite3_system_errno(db) : 0;
  if (primary == SQLITE_FULL || (primary == SQLITE_IOERR && (sys_errno == ENOSPC || sys_errno == EDQUOT))) {
    return ResourceExhaustedError("ledger disk full: refusing new sessions (" + detail + ")");
  }
  switch (primary) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return UnavailableError(detail + "; another process holds the ledger's write lock");
    case SQLITE_NOTADB: {
      // Most often the wrong file given as the ledger (a JSON export, a key): say so in words.
      const char* file = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
      return InvalidArgumentError(std::string(file != nullptr && *file != '\0' ? file : "the file") +
                                  " is not a wipeproof ledger (SQLite): not an SQLite database, or its header is "
                                  "damaged");
    }
    case SQLITE_CORRUPT:
      return DataLossError(detail);
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return PermissionDeniedError(detail);
    case SQLITE_CANTOPEN:
      return NotFoundError(detail);
    default:
      return InternalError(detail);
  }
}

// ---- LedgerStmt ----------------------------------------------------------------------------

Status LedgerStmt::BindInt64(int index, int64_t value) {
  const int rc = sqlite3_bind_int64(stmt_.get(), index, value);
  return rc == SQLITE_OK ? Status::Ok() : SqliteError(db_, rc, "binding parameter of " + sql_);
}

Status LedgerStmt::BindBlob(int index, proto::ByteView value) {
  // A zero-length blob still binds as a blob (not NULL): sqlite3_bind_zeroblob(0).
  const int rc = value.size() == 0
                     ? sqlite3_bind_zeroblob(stmt_.get(), index, 0)
                     : sqlite3_bind_blob64(stmt_.get(), index, value.begin(), value.size(), SQLITE_TRANSIENT);
  return rc == SQLITE_OK ? Status::Ok() : SqliteError(db_, rc, "binding parameter of " + sql_);
}

Status LedgerStmt::BindText(int index, const std::string& value) {
  const int rc = sqlite3_bind_text64(stmt_.get(), index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return rc == SQLITE_OK ? Status::Ok() : SqliteError(db_, rc, "binding parameter of " + sql_);
}

StatusOr<bool> LedgerStmt::Step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sql_);
}

Status LedgerStmt::Run() {
  for (;;) {
    WP_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

void LedgerStmt::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

int64_t LedgerStmt::ColumnInt64(int column) const { return sqlite3_column_int64(stmt_.get(), column); }

proto::ByteView LedgerStmt::ColumnBlob(int column) const {
  const void* data = sqlite3_column_blob(stmt_.get(), column);
  const int size = sqlite3_column_bytes(stmt_.get(), column);
  if (data == nullptr || size <= 0) return proto::ByteView();
  return proto::ByteView(static_cast<const uint8_t*>(data), static_cast<size_t>(size));
}

std::string LedgerStmt::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_.get(), column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text));
}

// ---- LedgerDb ------------------------------------------------------------------------------

StatusOr<std::unique_ptr<LedgerDb>> LedgerDb::Open(const std::string& path, bool read_only) {
  if (path.empty()) return InvalidArgumentError("ledger path is empty");
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (read_only) return NotFoundError("ledger " + path + ": " + std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    // A FIFO would block the open for ever; a directory or device is no ledger either.
    return InvalidArgumentError("ledger " + path + " is not a regular file");
  }
  // NOMUTEX: Ledger serialises access itself. No URI parsing, so odd file names stay file names.
  const int flags =
      (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX;
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(db, rc, "opening ledger " + path);
    sqlite3_close_v2(db);  // a handle is returned even on failure
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  return std::unique_ptr<LedgerDb>(new LedgerDb(db, path));
}

LedgerDb::~LedgerDb() { sqlite3_close_v2(db_); }

Status LedgerDb::Exec(const std::string& sql) {
  char* error = nullptr;
  const int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  sqlite3_free(error);  // sqlite3_errmsg() still holds the same text
  return rc == SQLITE_OK ? Status::Ok() : SqliteError(db_, rc, sql);
}

StatusOr<LedgerStmt> LedgerDb::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return SqliteError(db_, rc, "preparing " + sql);
  }
  return LedgerStmt(db_, stmt, sql);
}

StatusOr<int64_t> LedgerDb::QueryInt64(const std::string& sql) {
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, Prepare(sql));
  WP_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnInt64(0) : int64_t{0};
}

StatusOr<std::string> LedgerDb::QueryText(const std::string& sql) {
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, Prepare(sql));
  WP_ASSIGN_OR_RETURN(bool row, stmt.Step());
  return row ? stmt.ColumnText(0) : std::string();
}

// ---- LedgerTransaction ---------------------------------------------------------------------

StatusOr<LedgerTransaction> LedgerTransaction::Begin(LedgerDb* db, bool immediate) {
  WP_RETURN_IF_ERROR(db->Exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN"));
  return LedgerTransaction(db);
}

LedgerTransaction::~LedgerTransaction() {
  // After a failed COMMIT SQLite may or may not have rolled back already (SQLITE_FULL during
  // commit can leave the transaction open); roll back only if one is still open.
  if (db_ != nullptr && sqlite3_get_autocommit(db_->handle()) == 0) db_->Exec("ROLLBACK").IgnoreError();
}

Status LedgerTransaction::Commit() {
  Status status = db_->Exec("COMMIT");
  if (status.ok()) db_ = nullptr;
  return status;
}

}  // namespace wipeproof

#include "challenger/ledger/ledger.h"

#include <capnp/message.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_sqlite.h"
#include "challenger/ledger/ledger_verify.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {
namespace {

constexpr char kSchema[] = R"sql(
CREATE TABLE entries (
  sequence INTEGER PRIMARY KEY CHECK (sequence >= 0),
  kind INTEGER NOT NULL,
  session_id BLOB NOT NULL,
  recorded_at_unix_us INTEGER NOT NULL,
  entry_digest BLOB NOT NULL,
  envelope BLOB NOT NULL
);
CREATE INDEX entries_by_session ON entries (session_id);
CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
)sql";

// Added to format 1 without a version change: a build that does not know it ignores it, and Open
// adds it to a ledger made before it (ledger.h "Documents").
constexpr char kDocumentsSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS documents (
  digest BLOB PRIMARY KEY,
  kind TEXT NOT NULL,
  body BLOB NOT NULL,
  recorded_at_unix_us INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

constexpr char kSelectRows[] =
    "SELECT sequence, kind, session_id, recorded_at_unix_us, entry_digest, envelope FROM entries";

LedgerRow ReadRow(const LedgerStmt& stmt) {
  LedgerRow row;
  row.sequence = static_cast<uint64_t>(stmt.ColumnInt64(0));
  row.kind = stmt.ColumnInt64(1);
  proto::ByteView session = stmt.ColumnBlob(2);
  row.session_id.assign(session.begin(), session.end());
  row.recorded_at_unix_us = stmt.ColumnInt64(3);
  proto::ByteView digest = stmt.ColumnBlob(4);
  row.entry_digest.assign(digest.begin(), digest.end());
  proto::ByteView envelope = stmt.ColumnBlob(5);
  row.envelope.assign(envelope.begin(), envelope.end());
  return row;
}

// Connection settings. journal_mode is stored in the file; synchronous and the limits are not.
Status Configure(LedgerDb* db, const LedgerOptions& options, bool read_only) {
  sqlite3_busy_timeout(db->handle(), std::max(0, options.busy_timeout_ms));
  if (!read_only) {
    WP_ASSIGN_OR_RETURN(std::string mode, db->QueryText("PRAGMA journal_mode=WAL"));
    if (mode != "wal") {
      return FailedPreconditionError("ledger " + db->path() + ": SQLite refused WAL mode (journal_mode is '" + mode +
                                     "'); is the file on a network file system?");
    }
    WP_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=FULL"));
  }
  if (options.max_page_count > 0) {
    WP_RETURN_IF_ERROR(db->QueryInt64("PRAGMA max_page_count=" + std::to_string(options.max_page_count)).status());
  }
  return Status::Ok();
}

// FAILED_PRECONDITION unless the file carries our application id and format version.
Status CheckFormat(LedgerDb* db) {
  WP_ASSIGN_OR_RETURN(int64_t app_id, db->QueryInt64("PRAGMA application_id"));
  if (app_id != kLedgerApplicationId) {
    return FailedPreconditionError("ledger " + db->path() + " is not a wipeproof ledger (application_id " +
                                   std::to_string(app_id) + ")");
  }
  WP_ASSIGN_OR_RETURN(int64_t version, db->QueryInt64("PRAGMA user_version"));
  if (version != kLedgerFormatVersion) {
    return FailedPreconditionError("ledger " + db->path() + " has format version " + std::to_string(version) +
                                   "; this build reads version " + std::to_string(kLedgerFormatVersion));
  }
  return Status::Ok();
}

// Creates the schema in an empty file, or checks the format of an existing one.
Status InitSchema(LedgerDb* db, const proto::KeyId& key_id, int64_t now_unix_us) {
  WP_ASSIGN_OR_RETURN(LedgerTransaction txn, LedgerTransaction::Begin(db, /*immediate=*/true));
  WP_ASSIGN_OR_RETURN(int64_t app_id, db->QueryInt64("PRAGMA application_id"));
  WP_ASSIGN_OR_RETURN(int64_t objects, db->QueryInt64("SELECT count(*) FROM sqlite_master"));
  if (app_id != 0 || objects != 0) {
    WP_RETURN_IF_ERROR(CheckFormat(db));
    return txn.Commit();
  }
  WP_RETURN_IF_ERROR(db->Exec(kSchema));
  WP_RETURN_IF_ERROR(db->Exec("PRAGMA application_id=" + std::to_string(kLedgerApplicationId) +
                              "; PRAGMA user_version=" + std::to_string(kLedgerFormatVersion)));
  WP_ASSIGN_OR_RETURN(LedgerStmt insert, db->Prepare("INSERT INTO meta (key, value) VALUES (?, ?)"));
  WP_RETURN_IF_ERROR(insert.BindText(1, "challenger_key_id"));
  WP_RETURN_IF_ERROR(insert.BindBlob(2, proto::AsView(key_id)));
  WP_RETURN_IF_ERROR(insert.Run());
  insert.Reset();
  WP_RETURN_IF_ERROR(insert.BindText(1, "created_at_unix_us"));
  WP_RETURN_IF_ERROR(insert.BindInt64(2, now_unix_us));
  WP_RETURN_IF_ERROR(insert.Run());
  return txn.Commit();
}

std::string KeyMismatch(const std::string& path, const proto::KeyId& recorded, const proto::KeyId& given) {
  return "ledger " + path + " was written by challenger key " + proto::KeyIdHex(recorded) + ", not key " +
         proto::KeyIdHex(given);
}

}  // namespace

Ledger::Ledger(std::string path, std::unique_ptr<LedgerDb> db, std::optional<proto::KeyPair> key, const Clock* clock,
               LedgerOptions options)
    : path_(std::move(path)), db_(std::move(db)), key_(std::move(key)), clock_(clock), options_(std::move(options)) {}

Ledger::~Ledger() = default;

StatusOr<std::unique_ptr<Ledger>> Ledger::Open(const std::string& path, const proto::KeyPair& challenger_key,
                                               const Clock& clock, LedgerOptions options) {
  WP_RETURN_IF_ERROR(proto::InitSodium());
  WP_ASSIGN_OR_RETURN(std::unique_ptr<LedgerDb> db, LedgerDb::Open(path, /*read_only=*/false));
  WP_RETURN_IF_ERROR(Configure(db.get(), options, /*read_only=*/false));
  const proto::KeyId key_id = proto::KeyIdOf(challenger_key.public_key);
  WP_RETURN_IF_ERROR(InitSchema(db.get(), key_id, clock.UnixMicros()));
  WP_RETURN_IF_ERROR(db->Exec(kDocumentsSchema));
  std::unique_ptr<Ledger> ledger(new Ledger(path, std::move(db), challenger_key, &clock, std::move(options)));
  {
    std::lock_guard<std::mutex> lock(ledger->mu_);
    WP_ASSIGN_OR_RETURN(proto::KeyId recorded, ledger->RecordedKeyIdLocked());
    if (recorded != key_id) return FailedPreconditionError(KeyMismatch(path, recorded, key_id));
    WP_RETURN_IF_ERROR(ledger->CheckTailLocked(challenger_key.public_key));
  }
  return ledger;
}

StatusOr<std::unique_ptr<Ledger>> Ledger::OpenReadOnly(const std::string& path, LedgerOptions options) {
  WP_RETURN_IF_ERROR(proto::InitSodium());
  WP_ASSIGN_OR_RETURN(std::unique_ptr<LedgerDb> db, LedgerDb::Open(path, /*read_only=*/true));
  WP_RETURN_IF_ERROR(Configure(db.get(), options, /*read_only=*/true));
  WP_RETURN_IF_ERROR(CheckFormat(db.get()));
  return std::unique_ptr<Ledger>(new Ledger(path, std::move(db), std::nullopt, nullptr, std::move(options)));
}

StatusOr<proto::KeyId> Ledger::RecordedKeyId() const {
  std::lock_guard<std::mutex> lock(mu_);
  return RecordedKeyIdLocked();
}

StatusOr<proto::KeyId> Ledger::RecordedKeyIdLocked() const {
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, db_->Prepare("SELECT value FROM meta WHERE key = 'challenger_key_id'"));
  WP_ASSIGN_OR_RETURN(bool row, stmt.Step());
  proto::ByteView value = row ? stmt.ColumnBlob(0) : proto::ByteView();
  if (value.size() != proto::kKeyIdBytes) {
    return DataLossError("ledger " + path_ + ": meta table has no valid challenger_key_id");
  }
  proto::KeyId key_id;
  std::copy(value.begin(), value.end(), key_id.begin());
  return key_id;
}

Status Ledger::CheckTailLocked(const proto::PublicKey& challenger_pub) const {
  WP_ASSIGN_OR_RETURN(LedgerTransaction snapshot, LedgerTransaction::Begin(db_.get(), /*immediate=*/false));
  WP_ASSIGN_OR_RETURN(int64_t count, db_->QueryInt64("SELECT count(*) FROM entries"));
  if (count == 0) return Status::Ok();
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, db_->Prepare(std::string(kSelectRows) + " ORDER BY sequence DESC LIMIT 2"));
  std::vector<LedgerRow> rows;  // last, then the one before it
  for (;;) {
    WP_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    rows.push_back(ReadRow(stmt));
  }
  const std::string refusing = "ledger " + path_ + ": tail does not verify, refusing to append (run `ledger verify`): ";
  // Sequences are unique and >= 0, so count == last + 1 means no row is missing.
  if (rows.empty() || rows[0].sequence != static_cast<uint64_t>(count - 1)) {
    return DataLossError(refusing + std::to_string(count) + " rows but the last is entry " +
                         (rows.empty() ? std::string("<none>") : std::to_string(rows[0].sequence)) +
                         ": entries are missing");
  }
  Status status;
  if (rows.size() == 1) {
    ChainVerifier verifier(challenger_pub);
    status = verifier.Next(rows[0]).status();
  } else {
    auto anchor = VerifyLedgerRow(rows[1], challenger_pub);
    if (anchor.ok()) {
      ChainVerifier verifier(challenger_pub, rows[0].sequence, anchor->entry_digest);
      status = verifier.Next(rows[0]).status();
    } else {
      status = anchor.status();
    }
  }
  if (!status.ok()) return DataLossError(refusing + status.message());
  return Status::Ok();
}

StatusOr<uint64_t> Ledger::Append(proto::LedgerRecordKind kind, proto::ByteView record, proto::ByteView session_id) {
  if (read_only()) return FailedPreconditionError("ledger " + path_ + " is open read-only");
  if (session_id.size() != 0 && session_id.size() != proto::kSessionIdBytes) {
    return InvalidArgumentError("ledger append: session id of " + std::to_string(session_id.size()) +
                                " bytes, want 16 (or none)");
  }
  if (record.size() > kMaxLedgerRecordBytes) {
    return InvalidArgumentError("ledger append: record of " + std::to_string(record.size()) +
                                " bytes is over the limit of " + std::to_string(kMaxLedgerRecordBytes));
  }
  WP_RETURN_IF_ERROR(CheckLedgerRecord(kind, record, session_id, &key_->public_key).WithContext("ledger append"));

  std::lock_guard<std::mutex> lock(mu_);
  const std::string context = "ledger " + path_;
  // IMMEDIATE: the write lock is held from here, so the tail read below is the entry we chain to.
  auto txn = LedgerTransaction::Begin(db_.get(), /*immediate=*/true);
  if (!txn.ok()) return txn.status().WithContext(context);

  uint64_t sequence = 0;
  proto::Digest prev_digest{};  // genesis: 32 zero bytes
  {
    WP_ASSIGN_OR_RETURN(LedgerStmt tail, db_->Prepare(std::string(kSelectRows) + " ORDER BY sequence DESC LIMIT 1"));
    WP_ASSIGN_OR_RETURN(bool has_tail, tail.Step());
    if (has_tail) {
      const LedgerRow row = ReadRow(tail);
      auto verified = VerifyLedgerRow(row, key_->public_key);
      if (!verified.ok()) {
        return DataLossError(context +
                             ": last entry does not verify, refusing to append: " + verified.status().message());
      }
      sequence = row.sequence + 1;
      prev_digest = verified->entry_digest;
    }
  }

  capnp::MallocMessageBuilder message;
  proto::LedgerEntry::Builder entry = message.initRoot<proto::LedgerEntry>();
  entry.setSequence(sequence);
  entry.setPrevEntryDigest(capnp::Data::Reader(prev_digest.data(), prev_digest.size()));
  entry.setKind(kind);
  entry.setRecord(record);
  entry.setSessionId(session_id);
  entry.setRecordedAtUnixUs(clock_->UnixMicros());
  WP_ASSIGN_OR_RETURN(proto::Bytes payload, proto::EncodeCanonical(entry.asReader()));
  WP_ASSIGN_OR_RETURN(proto::SignedEnvelope signed_entry,
                      proto::SignEnvelope(proto::MessageKind::LEDGER_ENTRY, proto::AsView(payload), *key_));
  const proto::Bytes envelope = proto::EncodeEnvelope(signed_entry);
  const proto::Digest digest = LedgerEntryDigest(proto::AsView(envelope));

  WP_ASSIGN_OR_RETURN(LedgerStmt insert,
                      db_->Prepare("INSERT INTO entries (sequence, kind, session_id, recorded_at_unix_us, "
                                   "entry_digest, envelope) VALUES (?, ?, ?, ?, ?, ?)"));
  WP_RETURN_IF_ERROR(insert.BindInt64(1, static_cast<int64_t>(sequence)));
  WP_RETURN_IF_ERROR(insert.BindInt64(2, static_cast<int64_t>(kind)));
  WP_RETURN_IF_ERROR(insert.BindBlob(3, session_id));
  WP_RETURN_IF_ERROR(insert.BindInt64(4, entry.getRecordedAtUnixUs()));
  WP_RETURN_IF_ERROR(insert.BindBlob(5, proto::AsView(digest)));
  WP_RETURN_IF_ERROR(insert.BindBlob(6, proto::AsView(envelope)));
  Status inserted = insert.Run();
  if (!inserted.ok()) return inserted.WithContext(context + ": appending entry " + std::to_string(sequence));
  if (options_.before_commit_for_testing) WP_RETURN_IF_ERROR(options_.before_commit_for_testing(sequence));
  Status committed = txn->Commit();
  if (!committed.ok()) return committed.WithContext(context + ": committing entry " + std::to_string(sequence));
  return sequence;
}

StatusOr<LedgerHead> Ledger::Head() const {
  std::lock_guard<std::mutex> lock(mu_);
  WP_ASSIGN_OR_RETURN(LedgerTransaction snapshot, LedgerTransaction::Begin(db_.get(), /*immediate=*/false));
  LedgerHead head;
  WP_ASSIGN_OR_RETURN(int64_t count, db_->QueryInt64("SELECT count(*) FROM entries"));
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, db_->Prepare(std::string(kSelectRows) + " ORDER BY sequence DESC LIMIT 1"));
  WP_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
  if (!has_row) return head;
  const LedgerRow row = ReadRow(stmt);
  head.entry_count = static_cast<uint64_t>(count);
  head.sequence = row.sequence;
  head.digest = LedgerEntryDigest(proto::AsView(row.envelope));
  head.recorded_at_unix_us = row.recorded_at_unix_us;
  head.envelope = row.envelope;
  return head;
}

StatusOr<LedgerHead> Ledger::Verify(const proto::PublicKey& challenger_pub, const LedgerHead* expected_head) const {
  std::lock_guard<std::mutex> lock(mu_);
  WP_ASSIGN_OR_RETURN(proto::KeyId recorded, RecordedKeyIdLocked());
  const proto::KeyId given = proto::KeyIdOf(challenger_pub);
  if (recorded != given) return PermissionDeniedError(KeyMismatch(path_, recorded, given) + " (wrong key given?)");
  ChainVerifier verifier(challenger_pub);
  if (expected_head != nullptr) verifier.ExpectHead(*expected_head);
  WP_RETURN_IF_ERROR(ForEachRowLocked(std::nullopt, [&](const LedgerRow& row) { return verifier.Next(row).status(); }));
  WP_RETURN_IF_ERROR(verifier.Finish());
  return verifier.head();
}

Status Ledger::ForEachRow(const std::optional<proto::Bytes>& session_id,
                          const std::function<Status(const LedgerRow&)>& visit) const {
  std::lock_guard<std::mutex> lock(mu_);
  return ForEachRowLocked(session_id, visit);
}

Status Ledger::ForEachRowLocked(const std::optional<proto::Bytes>& session_id,
                                const std::function<Status(const LedgerRow&)>& visit) const {
  // One statement reads one snapshot, even while another connection appends.
  std::string sql = kSelectRows;
  if (session_id.has_value()) sql += " WHERE session_id = ?";
  sql += " ORDER BY sequence";
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, db_->Prepare(sql));
  if (session_id.has_value()) WP_RETURN_IF_ERROR(stmt.BindBlob(1, proto::AsView(*session_id)));
  for (;;) {
    WP_ASSIGN_OR_RETURN(bool has_row, stmt.Step());
    if (!has_row) return Status::Ok();
    WP_RETURN_IF_ERROR(visit(ReadRow(stmt)));
  }
}

Status Ledger::CheckRoomForSession(uint64_t bytes_needed) const {
  std::lock_guard<std::mutex> lock(mu_);
  const size_t slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
  struct statvfs fs;
  if (::statvfs(dir.c_str(), &fs) != 0) {
    return InternalError("ledger " + path_ + ": statvfs(" + dir + "): " + std::strerror(errno));
  }
  uint64_t room = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  std::string limit = "free on the file system";
  if (options_.max_page_count > 0) {
    WP_ASSIGN_OR_RETURN(int64_t page_size, db_->QueryInt64("PRAGMA page_size"));
    WP_ASSIGN_OR_RETURN(int64_t page_count, db_->QueryInt64("PRAGMA page_count"));
    WP_ASSIGN_OR_RETURN(int64_t free_pages, db_->QueryInt64("PRAGMA freelist_count"));
    const int64_t pages_left = std::max<int64_t>(0, options_.max_page_count - page_count) + free_pages;
    const uint64_t page_room = static_cast<uint64_t>(pages_left) * static_cast<uint64_t>(page_size);
    if (page_room < room) {
      room = page_room;
      limit = "left under max_page_count";
    }
  }
  if (room < bytes_needed) {
    return ResourceExhaustedError("ledger disk full: refusing new sessions (ledger " + path_ + " has " +
                                  std::to_string(room) + " bytes " + limit + ", a session may need " +
                                  std::to_string(bytes_needed) + ")");
  }
  return Status::Ok();
}

Status Ledger::RecordDocument(const std::string& kind, std::string_view body) {
  if (read_only()) return FailedPreconditionError("ledger " + path_ + " is open read-only");
  if (kind.empty() || body.empty() || body.size() > kMaxLedgerRecordBytes) {
    return InvalidArgumentError("ledger document: want a kind and 1 to " + std::to_string(kMaxLedgerRecordBytes) +
                                " bytes, got " + std::to_string(body.size()));
  }
  const proto::ByteView bytes(reinterpret_cast<const uint8_t*>(body.data()), body.size());
  const proto::Digest digest = proto::Blake2b256(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  WP_ASSIGN_OR_RETURN(LedgerTransaction txn, LedgerTransaction::Begin(db_.get(), /*immediate=*/true));
  WP_ASSIGN_OR_RETURN(LedgerStmt insert,
                      db_->Prepare("INSERT OR IGNORE INTO documents (digest, kind, body, recorded_at_unix_us) "
                                   "VALUES (?, ?, ?, ?)"));
  WP_RETURN_IF_ERROR(insert.BindBlob(1, proto::AsView(digest)));
  WP_RETURN_IF_ERROR(insert.BindText(2, kind));
  WP_RETURN_IF_ERROR(insert.BindBlob(3, bytes));
  WP_RETURN_IF_ERROR(insert.BindInt64(4, clock_->UnixMicros()));
  WP_RETURN_IF_ERROR(insert.Run());
  return txn.Commit();
}

StatusOr<std::vector<LedgerDocument>> Ledger::Documents() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LedgerDocument> out;
  WP_ASSIGN_OR_RETURN(int64_t tables,
                      db_->QueryInt64("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'documents'"));
  if (tables == 0) return out;  // a ledger made before documents were recorded, opened read-only
  WP_ASSIGN_OR_RETURN(LedgerStmt stmt, db_->Prepare("SELECT digest, kind, body, recorded_at_unix_us FROM documents "
                                                    "ORDER BY recorded_at_unix_us, digest"));
  for (;;) {
    WP_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    LedgerDocument d;
    const proto::ByteView digest = stmt.ColumnBlob(0);
    const proto::ByteView body = stmt.ColumnBlob(2);
    d.kind = stmt.ColumnText(1);
    d.body.assign(reinterpret_cast<const char*>(body.begin()), body.size());
    d.recorded_at_unix_us = stmt.ColumnInt64(3);
    // Only the body is trusted: a row whose digest is not its body's was altered.
    d.digest = proto::Blake2b256(body);
    if (digest.size() != d.digest.size() || !std::equal(digest.begin(), digest.end(), d.digest.begin())) {
      return DataLossError("ledger " + path_ + ": document of kind " + d.kind + " is stored under a digest that is "
                           "not its body's (altered)");
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace wipeproof

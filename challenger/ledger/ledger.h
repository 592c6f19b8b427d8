// The challenger's ledger: an append-only, signed, hash-chained record of every order, fill report,
// round log, verdict, transcript and receipt (design-brief "Protocol v1", step 4), kept in SQLite.
//
// Entries. Entry n is an Envelope of kind ledgerEntry signed by the challenger key; its payload is
// the canonical LedgerEntry {sequence = n, prevEntryDigest, kind, record, sessionId,
// recordedAtUnixUs} (wipe.capnp). The chain:
//   prevEntryDigest(0) = 32 zero bytes
//   prevEntryDigest(n) = BLAKE2b-256(envelope bytes of entry n-1)   (proto::EncodeEnvelope form)
// The digest covers the whole envelope (payload and signature), so the digest of the last entry
// commits to every entry and every signature before it. Record formats: challenger/ledger/ledger_records.h.
//
// The signed head is the last entry's envelope itself: signed by the challenger, it names its
// sequence, and its digest is the value the next entry's prevEntryDigest will hold. An auditor who
// keeps an exported head can later check that the ledger still extends it (Verify with
// expected_head) -- the only way to notice entries removed from the *end*, which a chain alone
// cannot show.
//
// Storage. File format version kLedgerFormatVersion, application_id kLedgerApplicationId:
//   entries(sequence INTEGER PRIMARY KEY, kind INTEGER, session_id BLOB, recorded_at_unix_us
//           INTEGER, entry_digest BLOB, envelope BLOB), index on session_id;
//   meta(key, value): "challenger_key_id" (8 bytes), "created_at_unix_us";
//   documents(digest, kind, body, recorded_at_unix_us): authority-signed documents a session's
//           records name by digest (the inventory its delegation names), each kept once. Not in
//           the chain: each is authenticated by its BLAKE2b-256 digest, which the authority signed
//           (added to format 1 without a version change; Open adds the table to an older ledger).
// Only `envelope` is trusted; the other columns are there for queries and Verify checks that they
// agree with it.
//
// Durability and faults.
// - journal_mode=WAL, synchronous=FULL: a committed append has been fsync'ed to the WAL before
//   Append returns. Each Append is one BEGIN IMMEDIATE ... COMMIT transaction, so a process killed
//   mid-append leaves the ledger exactly as it was before that append (SQLite ignores WAL frames
//   without a commit record when it recovers).
// - Disk full (SQLITE_FULL, ENOSPC): Append returns RESOURCE_EXHAUSTED "ledger disk full: refusing
//   new sessions (...)" and rolls back; the ledger still verifies and later appends continue at the
//   same sequence once there is room. The challenger should call CheckRoomForSession before it
//   sends an order, so a session is refused rather than run without a record.
// - Open (read-write) checks the tail (row count, last two entries: signatures, sequence, link) and
//   refuses a ledger whose tail does not verify or that another challenger key wrote; it never
//   appends to a broken chain. A full walk is Verify.
//
// Units: times are microseconds since the Unix epoch (wall clock, from the injected Clock); sizes
// are bytes.
//
// Thread-safety: a Ledger is thread-safe (one mutex serialises its SQLite connection), so the
// sessions of a wave may append from their own threads. Several processes may open one file: reads
// never block, and appends from different processes serialise on SQLite's write lock (waiting up to
// LedgerOptions::busy_timeout_ms), but the design is one writing challenger per ledger file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "challenger/ledger/ledger_row.h"
#include "common/clock.h"
#include "common/status.h"
#include "proto/codec.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

class LedgerDb;

inline constexpr int32_t kLedgerApplicationId = 0x57504c47;  // "WPLG" (PRAGMA application_id)
inline constexpr int32_t kLedgerFormatVersion = 1;           // PRAGMA user_version
// Bytes one session may add to the ledger in the worst case: every record at its size limit
// (order 1 MiB, fill report 1 MiB, round log 4 MiB, verdict 4 MiB, transcript and receipt
// < 1 MiB), twice for the WAL copy, rounded up.
inline constexpr uint64_t kSessionLedgerBytes = uint64_t{32} << 20;
// Largest record Append takes (bytes): the LedgerEntry payload limit less room for its other fields.
inline constexpr size_t kMaxLedgerRecordBytes = proto::kMaxLedgerEntryBytes - 4096;

// An authority-signed document the ledger keeps by digest (RecordDocument).
struct LedgerDocument {
  std::string kind;  // "inventory"
  proto::Digest digest{};  // BLAKE2b-256 of body
  std::string body;
  int64_t recorded_at_unix_us = 0;
};

struct LedgerOptions {
  // Milliseconds to wait for another connection's write lock before UNAVAILABLE.
  int busy_timeout_ms = 5000;
  // Pages (PRAGMA max_page_count) the database may grow to; 0 leaves SQLite's limit. Bounds the
  // file; tests use a small value to simulate a full disk.
  int64_t max_page_count = 0;
  // Test hook: called inside Append's transaction after the INSERT and before COMMIT with the new
  // sequence. A non-OK status rolls the append back and is returned; a test may also _exit() here
  // to simulate a crash mid-append. Leave empty in production.
  std::function<Status(uint64_t sequence)> before_commit_for_testing;
};

class Ledger {
 public:
  // Opens or creates the ledger at `path` for appending, signing entries with `challenger_key`
  // and stamping them with `clock` (which must outlive the Ledger). Sets WAL and synchronous=FULL,
  // creates the schema on a new file, then checks the tail (see top of file).
  // Errors: FAILED_PRECONDITION (not a wipeproof ledger, another format version, or written by
  // another challenger key: the message names both key ids); DATA_LOSS (the tail does not verify:
  // run `wipeproof-challenger ledger verify`); others from SQLite (ledger_sqlite.h).
  static StatusOr<std::unique_ptr<Ledger>> Open(const std::string& path, const proto::KeyPair& challenger_key,
                                                const Clock& clock, LedgerOptions options = {});
  // Opens an existing ledger for reading only (auditors: show, verify, export). Creates nothing.
  // Errors: NOT_FOUND (no file), FAILED_PRECONDITION (not a wipeproof ledger), SQLite errors.
  static StatusOr<std::unique_ptr<Ledger>> OpenReadOnly(const std::string& path, LedgerOptions options = {});

  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // Appends one record as the next entry, durably, and returns its sequence.
  // `record` must match `kind` (ledger_records.h) and belong to `session_id` (16 bytes).
  // Errors: FAILED_PRECONDITION (read-only ledger); INVALID_ARGUMENT (bad kind, session id size,
  // record over kMaxLedgerRecordBytes or not matching its kind); DATA_LOSS (the current last entry
  // does not verify: nothing is appended after it); RESOURCE_EXHAUSTED (disk full: "ledger disk
  // full: refusing new sessions"); UNAVAILABLE (write lock busy); INTERNAL (other SQLite errors).
  // On any error nothing was appended.
  StatusOr<uint64_t> Append(proto::LedgerRecordKind kind, proto::ByteView record, proto::ByteView session_id);

  // The last stored entry, as stored (not verified; Verify returns a verified head).
  StatusOr<LedgerHead> Head() const;

  // Walks every entry in sequence order, in one read snapshot: the envelope decodes, its signer is
  // `challenger_pub` and the signature verifies, the signed sequence equals the row's and has no
  // gap, prevEntryDigest links to the previous envelope, the indexed columns agree, the record
  // matches its kind. With `expected_head` (a head exported earlier), also that the ledger still
  // holds that entry unchanged. Returns the verified head. Holds this Ledger's lock for the walk
  // (appends through it wait); a long audit can use its own OpenReadOnly instance instead.
  // Errors: PERMISSION_DENIED when the ledger was written by another key than `challenger_pub`
  // (wrong key given); DATA_LOSS naming the first bad sequence and what is wrong ("modified",
  // "missing", "reordered", ...); SQLite errors.
  StatusOr<LedgerHead> Verify(const proto::PublicKey& challenger_pub, const LedgerHead* expected_head = nullptr) const;

  // Calls `visit` with every stored row in sequence order, in one read snapshot; only the rows of
  // `session_id` when it is set. Stops at and returns the first non-OK status of `visit`.
  // REQUIRES: `visit` does not call back into this Ledger.
  Status ForEachRow(const std::optional<proto::Bytes>& session_id,
                    const std::function<Status(const LedgerRow&)>& visit) const;

  // OK if the ledger has room for `bytes_needed` more bytes: free space of the file system holding
  // it and, with LedgerOptions::max_page_count, the pages left. Errors: RESOURCE_EXHAUSTED
  // "ledger disk full: refusing new sessions (...)"; INTERNAL if the file system cannot be queried.
  Status CheckRoomForSession(uint64_t bytes_needed = kSessionLedgerBytes) const;

  // Records `body` (the document's exact bytes) of `kind` ("inventory") once by its BLAKE2b-256
  // digest; a document already recorded is left as it is. Errors: FAILED_PRECONDITION (read-only),
  // INVALID_ARGUMENT (empty kind or body, or a body over kMaxLedgerRecordBytes), SQLite errors.
  Status RecordDocument(const std::string& kind, std::string_view body);
  // Every recorded document, oldest first, each digest recomputed from its body. Errors: DATA_LOSS
  // for a row whose stored digest is not its body's; SQLite errors. Empty for an older ledger.
  StatusOr<std::vector<LedgerDocument>> Documents() const;

  // The challenger key id recorded when the ledger was created.
  StatusOr<proto::KeyId> RecordedKeyId() const;

  const std::string& path() const { return path_; }
  bool read_only() const { return !key_.has_value(); }

 private:
  Ledger(std::string path, std::unique_ptr<LedgerDb> db, std::optional<proto::KeyPair> key, const Clock* clock,
         LedgerOptions options);
  Status CheckTailLocked(const proto::PublicKey& challenger_pub) const;
  StatusOr<proto::KeyId> RecordedKeyIdLocked() const;
  Status ForEachRowLocked(const std::optional<proto::Bytes>& session_id,
                          const std::function<Status(const LedgerRow&)>& visit) const;

  const std::string path_;
  mutable std::mutex mu_;
  std::unique_ptr<LedgerDb> db_;             // guarded by mu_
  const std::optional<proto::KeyPair> key_;  // empty for a read-only ledger
  const Clock* const clock_;                 // null for a read-only ledger
  const LedgerOptions options_;
};

}  // namespace wipeproof

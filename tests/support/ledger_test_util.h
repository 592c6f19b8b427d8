// Helpers of the ledger tests: fixed keys, real signed records of every kind, a temporary folder and
// raw SQL on a ledger file (to tamper with it the way an attacker with file access would).
#pragma once

#include <capnp/message.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "adversary/fixed_keys.h"
#include "challenger/ledger/ledger.h"
#include "proto/codec.h"
#include "proto/label_wire.h"
#include "proto/signing.h"

namespace wipeproof::ledger_test {

using proto::Bytes;
using proto::KeyPair;
using proto::LedgerRecordKind;

// Aborts the test binary when a helper's own set-up fails (a broken helper, not a test result).
template <typename T>
T Must(StatusOr<T> value, const char* what) {
  if (!value.ok()) {
    std::fprintf(stderr, "test helper %s failed: %s\n", what, value.status().ToString().c_str());
    std::abort();
  }
  return std::move(value).value();
}

inline KeyPair KeyFromByte(uint8_t fill) { return adversary::FixedKey(fill); }

struct Keys {
  KeyPair authority = KeyFromByte(1);
  KeyPair node = KeyFromByte(2);
  KeyPair challenger = KeyFromByte(3);
  KeyPair other = KeyFromByte(4);  // a key nobody trusts
};

// 16 bytes: n*16, n*16+1, ...
inline Bytes SessionId(uint8_t n) {
  Bytes id(proto::kSessionIdBytes);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(n * 16 + i);
  return id;
}


template <typename Builder>
Bytes SignToEnvelopeBytes(Builder builder, const KeyPair& key) {
  return proto::EncodeEnvelope(Must(proto::SignMessage(builder.asReader(), key), "SignMessage"));
}

// The authority's delegation to `challenger`, in force for all time, unsigned profiles allowed (a
// lab's): what test orders carry (proto/delegation.h).
// `inventory`: the inventory digest it names (none when null).
inline Bytes DelegationBytes(const KeyPair& authority, const proto::PublicKey& challenger,
                             const proto::Digest* inventory = nullptr) {
  capnp::MallocMessageBuilder message;
  auto d = message.initRoot<proto::Delegation>();
  d.setChallengerPublicKey(proto::AsView(challenger));
  d.setNotBeforeUnixUs(0);
  d.setNotAfterUnixUs(INT64_MAX);
  d.setName("test");
  d.setAllowUnsignedProfiles(true);
  if (inventory != nullptr) d.setInventoryDigest(proto::AsView(*inventory));
  return SignToEnvelopeBytes(d, authority);
}

// An order signed by keys.challenger under keys.authority's delegation (naming `inventory`'s digest
// when not null).
inline Bytes OrderRecord(const Bytes& session, const Keys& keys, const proto::Digest* inventory = nullptr) {
  capnp::MallocMessageBuilder message;
  auto order = message.initRoot<proto::WipeOrder>();
  order.setProtocolVersion(proto::PROTOCOL_VERSION);
  order.setSessionId(proto::AsView(session));
  order.setIssuedAtUnixUs(1'800'000'000'000'000);
  order.setExpiresAtUnixUs(1'800'000'060'000'000);
  order.setNodeName("node-a");
  order.setNodeKeyId(proto::AsView(proto::KeyIdOf(keys.node.public_key)));
  Bytes seed(proto::kSessionSeedBytes, 0x5a);
  order.setSeed(proto::AsView(seed));
  order.setFormat(proto::LabelFormat::POSEDB_BLAKE3_C1);
  order.setChunkLabels(4096);
  auto device = order.initDevices(1)[0];
  device.setSelector("host");
  device.setLabelCount(uint64_t{1} << 20);
  device.setLabelsPerRound(64);
  device.setCapacityBytes(uint64_t{32} << 20);
  device.setFillDeadlineUs(40'000'000);
  order.setFillDeadlineUs(40'000'000);
  order.setChallengerKeyId(proto::AsView(proto::KeyIdOf(keys.challenger.public_key)));
  order.setRoundDeadlineUs(900);
  order.initProfile().setName("default-uncalibrated");
  order.setHostMemoryInPlan(true);
  order.setWaveName("wave-1");
  order.setDelegation(proto::AsView(DelegationBytes(keys.authority, keys.challenger.public_key, inventory)));
  return SignToEnvelopeBytes(order, keys.challenger);
}

inline Bytes FillReportRecord(const Bytes& session, const Keys& keys) {
  capnp::MallocMessageBuilder message;
  auto report = message.initRoot<proto::FillReport>();
  report.setSessionId(proto::AsView(session));
  Bytes digest(proto::kDigestBytes, 0x11);
  report.setOrderDigest(proto::AsView(digest));
  report.setNodeKeyId(proto::AsView(proto::KeyIdOf(keys.node.public_key)));
  auto device = report.initDevices(1)[0];
  device.setSelector("host");
  device.setLabelCount(uint64_t{1} << 20);
  device.setBytesHeld(uint64_t{32} << 20);
  report.setFillMicros(1'234'567);
  return SignToEnvelopeBytes(report, keys.node);
}

inline Bytes RoundLogRecord(const Bytes& session, uint32_t rounds) {
  capnp::MallocMessageBuilder message;
  auto log = message.initRoot<proto::RoundLog>();
  log.setSessionId(proto::AsView(session));
  auto list = log.initRounds(rounds);
  for (uint32_t i = 0; i < rounds; ++i) {
    list[i].setRoundIndex(i);
    list[i].setElapsedUs(100 + i);
    list[i].setLabelsChecked(64);
    list[i].setDeadlineMet(true);
    list[i].setAllCorrect(true);
  }
  return Must(proto::EncodeCanonical(log.asReader()), "EncodeCanonical");
}

inline Bytes VerdictRecord(const Bytes& session, const KeyPair& signer, bool pass = true) {
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<proto::Verdict>();
  verdict.setSessionId(proto::AsView(session));
  verdict.setNodeName("node-a");
  verdict.setPass(pass);
  verdict.initFailure().setReason(pass ? proto::FailureReason::NONE : proto::FailureReason::LATE_ROUND);
  Bytes digest(proto::kDigestBytes, 0x22);
  verdict.setOrderDigest(proto::AsView(digest));
  verdict.setStatement("no bound: parameters not calibrated");
  return SignToEnvelopeBytes(verdict, signer);
}

inline Bytes TranscriptRecord(const Bytes& session, const Keys& keys) {
  capnp::MallocMessageBuilder message;
  auto transcript = message.initRoot<proto::TranscriptDigest>();
  transcript.setSessionId(proto::AsView(session));
  Bytes digest(proto::kDigestBytes, 0x33);
  transcript.setDigest(proto::AsView(digest));
  transcript.setVerdictDigest(proto::AsView(digest));
  transcript.setRoundCount(4);
  transcript.setNodeKeyId(proto::AsView(proto::KeyIdOf(keys.node.public_key)));
  return SignToEnvelopeBytes(transcript, keys.node);
}

inline Bytes ReceiptRecord(const Bytes& session, const KeyPair& signer, uint64_t verdict_sequence) {
  capnp::MallocMessageBuilder message;
  auto receipt = message.initRoot<proto::Receipt>();
  receipt.setSessionId(proto::AsView(session));
  receipt.setNodeName("node-a");
  receipt.setPass(true);
  Bytes digest(proto::kDigestBytes, 0x44);
  receipt.setOrderDigest(proto::AsView(digest));
  receipt.setVerdictDigest(proto::AsView(digest));
  receipt.setLedgerSequence(verdict_sequence);
  return SignToEnvelopeBytes(receipt, signer);
}

// The six records of one session, in the order a challenger writes them.
inline std::vector<std::pair<LedgerRecordKind, Bytes>> SessionRecords(const Bytes& session, const Keys& keys) {
  return {{LedgerRecordKind::ORDER, OrderRecord(session, keys)},
          {LedgerRecordKind::FILL_REPORT, FillReportRecord(session, keys)},
          {LedgerRecordKind::ROUND_LOG, RoundLogRecord(session, 4)},
          {LedgerRecordKind::VERDICT, VerdictRecord(session, keys.challenger)},
          {LedgerRecordKind::TRANSCRIPT, TranscriptRecord(session, keys)},
          {LedgerRecordKind::RECEIPT, ReceiptRecord(session, keys.challenger, 3)}};
}

// Appends one session's six records; returns their sequences. Fails the test on error.
inline std::vector<uint64_t> AppendSession(Ledger& ledger, const Bytes& session, const Keys& keys) {
  std::vector<uint64_t> sequences;
  for (const auto& [kind, record] : SessionRecords(session, keys)) {
    auto sequence = ledger.Append(kind, proto::AsView(record), proto::AsView(session));
    EXPECT_TRUE(sequence.ok()) << sequence.status().ToString();
    if (sequence.ok()) sequences.push_back(*sequence);
  }
  return sequences;
}

// A fresh folder under $TMPDIR (or /tmp), removed with its contents when destroyed.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/wp-ledger-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Runs `sql` on the ledger file (created if absent) through a separate, raw SQLite connection. Returns "" or the error.
inline std::string ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string error;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    error = db != nullptr ? sqlite3_errmsg(db) : "open failed";
  } else {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      error = message != nullptr ? message : "exec failed";
    }
    sqlite3_free(message);
  }
  sqlite3_close_v2(db);
  return error;
}

// Replaces the `envelope` column of row `sequence` with `envelope` (raw connection). Returns "" or
// the error.
inline std::string UpdateEnvelope(const std::string& path, uint64_t sequence, const Bytes& envelope) {
  sqlite3* db = nullptr;
  std::string error;
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(db, "UPDATE entries SET envelope = ? WHERE sequence = ?", -1, &stmt, nullptr) != SQLITE_OK ||
      sqlite3_bind_blob(stmt, 1, envelope.data(), static_cast<int>(envelope.size()), SQLITE_TRANSIENT) != SQLITE_OK ||
      sqlite3_bind_int64(stmt, 2, static_cast<sqlite3_int64>(sequence)) != SQLITE_OK ||
      sqlite3_step(stmt) != SQLITE_DONE || sqlite3_changes(db) != 1) {
    error = db != nullptr ? sqlite3_errmsg(db) : "open failed";
    if (error == "not an error") error = "no row updated";
  }
  sqlite3_finalize(stmt);
  sqlite3_close_v2(db);
  return error;
}

}  // namespace wipeproof::ledger_test

// The sessions a ledger holds, one summary each, read from its verified entries: for
// `wipeproof-challenger ledger show --json [--node=NAME]` (a node's history for an operator or a
// fleet tool) and for checking several ledgers together (no session in two of them:
// `ledger verify --ledger=A,B`).
//
// A session is every entry filed under its session id (order, fill notices, fill report, round
// logs, verdict, transcript, receipt); wave verdicts are filed under none and are not sessions.
// Its facts come from the records as the ledger holds them: the order (node, wave, issued time),
// the fill report (the agent's signing time), the last verdict (a pass superseded by a failure
// after the transcript check leaves the failure last). The ledger's signature covers every record;
// the order's and the report's own signatures are not checked here (`ledger audit` does that).
//
// Units: Unix microseconds for times (0: not recorded), bytes for sizes, microseconds for durations.
// Thread-safety: pure functions over their arguments (the ledger serializes its own reads).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "challenger/ledger/ledger.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

struct LedgerSessionSummary {
  proto::Bytes session_id;  // 16 bytes
  std::string node;         // the order's node name (the verdict's when no order is recorded)
  std::string wave;         // the order's wave name; "" when the node is in no wave
  // "pass", "fail", "busy" (the agent refused the order as busy, nodeBusy: a failed wipe shown apart)
  // or "no verdict" (the challenger stopped before one was recorded).
  std::string outcome = "no verdict";
  bool pass = false;
  std::string failure_reason;  // wipe.capnp FailureReason name ("none" on a pass); "" without verdict
  std::string failure_text;
  bool bound_stated = false;
  uint64_t bound_bytes = 0;  // the verdict's totalUnwipedBoundBytes; meaningful when bound_stated
  double confidence = 0;
  std::string statement;
  uint64_t fill_us = 0;                       // the verdict's fillMicros: order sent to report received (challenger)
  uint32_t rounds = 0;                        // rounds in the verdict
  int64_t order_issued_at_unix_us = 0;        // the order's issuedAt (challenger's clock)
  int64_t fill_report_signed_at_unix_us = 0;  // the fill report's finishedAt (the agent's clock)
  int64_t verdict_issued_at_unix_us = 0;      // the last verdict's issuedAt (challenger's clock)
  uint64_t first_sequence = 0;                // ledger entries of the session
  uint64_t last_sequence = 0;
  uint64_t entries = 0;
  std::optional<uint64_t> verdict_sequence;  // the last verdict's entry
  int64_t first_recorded_at_unix_us = 0;     // when the ledger recorded the first and last entry
  int64_t last_recorded_at_unix_us = 0;
};

struct LedgerSessions {
  LedgerHead head;                             // the verified head
  std::vector<LedgerSessionSummary> sessions;  // in the order of their first entry
};

// Verifies the whole chain under `challenger_pub` (as Ledger::Verify) and summarizes every session
// up to the verified head. Errors: Verify's (PERMISSION_DENIED: another challenger's ledger;
// DATA_LOSS naming the first bad entry), SQLite errors.
StatusOr<LedgerSessions> ReadLedgerSessions(const Ledger& ledger, const proto::PublicKey& challenger_pub);

// One session as JSON, keys in this order: session_id (hex), node, wave (or null), outcome, pass,
// failure {reason, text} (null without verdict), bound_stated, bound_bytes (null when not stated),
// confidence, statement, fill_us, rounds, times {order_issued, fill_report_signed, verdict_issued:
// each RFC 3339 UTC with microseconds, and *_unix_us beside it; null when not recorded},
// ledger {first_sequence, last_sequence, entries, verdict_sequence (or null), first_recorded,
// first_recorded_unix_us, last_recorded, last_recorded_unix_us}. Texts are as recorded: dump with
// error_handler_t::replace (bytes that are not UTF-8 become U+FFFD).
nlohmann::ordered_json LedgerSessionJson(const LedgerSessionSummary& session);

// The session ids of a ledger whose whole chain verified up to `head` (Ledger::Verify): the
// session column of every row before head.entry_count (Verify checked each against its signed
// entry). Errors: SQLite errors.
StatusOr<std::vector<proto::Bytes>> VerifiedSessionIds(const Ledger& ledger, const LedgerHead& head);

// A session id recorded in more than one ledger. A session runs under one challenger and is
// recorded in its ledger only, so this is a copy or a replay: one wipe counted twice.
struct SessionInSeveralLedgers {
  proto::Bytes session_id;
  std::vector<std::string> ledgers;  // the names given, in the order given
};
// `ledgers`: (name for messages, that ledger's session ids; repeats within one ledger are fine).
// Returns the sessions found in two or more of them, by session id.
std::vector<SessionInSeveralLedgers> FindSessionsInSeveralLedgers(
    const std::vector<std::pair<std::string, std::vector<proto::Bytes>>>& ledgers);
// "session <hex> is recorded in ledger A and ledger B: a session is recorded by one challenger
// only (copied or replayed?)".
std::string DescribeSessionInSeveralLedgers(const SessionInSeveralLedgers& duplicate);

// Times for JSON: RFC 3339 UTC with microseconds ("2027-01-15T08:00:00.123456Z"), or the Unix
// microseconds; null for 0 (not recorded).
nlohmann::ordered_json RfcTimeOrNull(int64_t unix_us);
nlohmann::ordered_json UnixMicrosOrNull(int64_t unix_us);

}  // namespace wipeproof

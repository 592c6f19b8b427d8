// What a session leaves in the ledger after its order (session_runner.h step 6), in the order an
// auditor reads them (challenger/audit/session_audit.h): the fill notices, the fill report, the
// round log, the verdict (a pass superseded by a failure: both, the transcript between them), the
// node-signed transcript, and a Receipt the challenger signs over the order, report and final
// verdict digests, that verdict's ledger sequence and the transcript when it verified.
//
// Thread-safety: pure functions apart from the sink.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "challenger/ledger/record_sink.h"
#include "challenger/session/round_log.h"
#include "challenger/session/verdict.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/signing.h"

namespace wipeproof {

struct SessionRecords {
  std::array<uint8_t, proto::kSessionIdBytes> session_id{};
  std::string node_name;
  proto::PublicKey node_key{};  // the transcript goes into the receipt only if it verifies under it
  bool pass = false;
  std::vector<proto::SignedEnvelope> notices;      // verified, in device order
  std::optional<proto::SignedEnvelope> report;     // only a recordable one: well-formed, this session's
  const std::vector<RoundRecord>* rounds = nullptr;
  const std::vector<RoundExchange>* exchanges = nullptr;
  proto::SignedEnvelope verdict;                       // the final verdict
  std::optional<proto::SignedEnvelope> superseded;     // the pass it superseded
  std::optional<proto::SignedEnvelope> transcript;     // only a recordable one
  proto::Digest order_digest{};
  std::optional<proto::Digest> report_digest;
  int64_t issued_at_unix_us = 0;  // the receipt's
};

struct RecordedSession {
  Status ledger;                             // OK when every record reached the ledger
  std::vector<uint64_t> sequences;           // of the records appended, in order
  std::optional<uint64_t> verdict_sequence;  // of the final verdict, when every record went in
  std::optional<proto::SignedEnvelope> receipt;
};

// Appends the session's records to `sink` and signs its receipt with `challenger`. A failed append
// or signature is logged and kept in RecordedSession::ledger (the first); the rest still go in.
RecordedSession RecordSession(const SessionRecords& records, const proto::KeyPair& challenger, RecordSink* sink);

}  // namespace wipeproof

// One wipe session, challenger side (design-brief.md "Protocol v1"), over any ProverAgent client:
// TCP in production, an in-memory pipe in tests. Everything timed uses the injected Clock's
// monotonic time; real-time waits (kj::Timer) only bound how long the runner waits for an answer
// that is late anyway (session_plan.h FillWaitLimitUs / RoundWaitLimitUs).
//
// Steps of Run():
//   1. draw the challenges (secret until sent), sign the order (authority key), check that the
//      ledger has room for the whole session (RecordSink::CheckRoomForSession; a full ledger refuses
//      the session before any order exists), record the order in the ledger, start the
//      expected-label worker (expected_labels.h);
//   2. connect; send startSession and time it, send to receipt; verify the report under the
//      inventory's node key (badSignature), check session id, order digest, node key id and the
//      devices against the plan (protocolError), every device's bytes held against its planned
//      bytes = capacity - allowed reserve, rounded down to whole chunks (shortCapacity, whatever the
//      agent's note says), the fill time (lateFill);
//   3. [wave runs: barrier 1, wave_sync.h] wait for the expected labels if they are not ready yet
//      (logged); R rounds: send round r's indices, time send to receipt, check the answer's shape,
//      session id and round (protocolError), every label (wrongLabel naming device, round, index,
//      expected and received), the time (lateRound);
//   4. [wave runs: barrier 2] build and sign the verdict (challenger key; verdict.h). On a pass,
//      send `finish`: the agent returns its node-signed TranscriptDigest, which must verify
//      (badSignature) and match the challenger's own TranscriptHasher digest, the verdict digest
//      and the round count (protocolError); if it does not, a second, failing verdict supersedes
//      the first. On a failure, the runner stops at the first failure and sends `abort` (not after
//      a disconnect);
//   5. record fill report, round log, verdict(s), transcript and a signed Receipt in the ledger
//      (a report or transcript that is malformed or names another session is not recordable there;
//      the failure text describes it instead).
// RPC failures map to: DISCONNECTED -> disconnected; a wipeproof Status from the agent -> orderRefused
// (startSession) or agentAborted (later calls), with its text; other exceptions -> protocolError.
//
// Nothing the agent sends can end the process or leave the order without a verdict: its text (RPC
// error descriptions, the Status it sent, device notes, selectors, digests it got wrong) is cut to
// kMaxAgentTextBytes where it enters (failure.h AgentText); an unexpected exception after the order
// was recorded is an `internal` failure; a verdict that cannot be signed is replaced by a minimal
// `internal` one (no rounds, the first failure's description cut short). Every such verdict is
// signed and recorded like any other.
//
// Thread-safety: one Run() per runner, on the thread that owns the kj event loop of the client.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <array>
#include <optional>
#include <vector>

#include "challenger/session/agent_connector.h"
#include "challenger/session/failure.h"
#include "challenger/session/round_log.h"
#include "challenger/session/session_plan.h"
#include "challenger/ledger/record_sink.h"
#include "challenger/session/verdict.h"
#include "challenger/session/wave_sync.h"
#include "common/clock.h"
#include "proto/signing.h"

namespace wipeproof {

struct SessionEnv {
  const Clock* clock = nullptr;             // required: all timing
  kj::Timer* timer = nullptr;               // required: bounds waits in real time
  kj::WaitScope* wait_scope = nullptr;      // required: the client's event loop
  RecordSink* records = nullptr;            // required: the ledger
  WaveSync* wave = nullptr;                 // set in wave runs
  int threads = 0;                          // expected-label threads; 0 = all cores
  uint64_t expected_labels_test_delay_us = 0;  // tests only: ExpectedLabelsSpec::test_delay_us
  uint64_t finish_timeout_us = 30'000'000;  // real-time bound on `finish`
  uint64_t abort_timeout_us = 5'000'000;    // real-time bound on `abort`
};

// The typed result of a session whose order was issued: pass, or the first failure.
struct SessionOutcome {
  bool pass = false;
  SessionFailure failure;  // reason NONE when pass
  std::string node_name;
  std::array<uint8_t, proto::kSessionIdBytes> session_id{};
  VerdictSummary summary;  // of the final verdict

  proto::SignedEnvelope order;
  std::optional<proto::SignedEnvelope> report;              // as received, when decodable
  proto::SignedEnvelope verdict;                            // the final verdict
  std::optional<proto::SignedEnvelope> superseded_verdict;  // the pass sent in finish, when the
                                                            // transcript check then failed
  std::optional<proto::SignedEnvelope> transcript;          // as received, when decodable
  std::optional<proto::SignedEnvelope> receipt;

  uint64_t fill_us = 0;                 // order sent to report received
  int64_t expected_labels_wait_us = 0;  // waited for expected labels after the fill (0: ready)
  std::vector<RoundRecord> rounds;
  std::vector<RoundExchange> exchanges;  // rounds as sent and answers as received, same order

  Status ledger;                             // OK when every record reached the ledger
  std::vector<uint64_t> ledger_sequences;    // of the records appended, in order
  std::optional<uint64_t> verdict_sequence;  // ledger sequence of the final verdict
};

class SessionRunner {
 public:
  SessionRunner(SessionPlan plan, SessionKeys keys, SessionEnv env);

  // Runs the session. Any failure after the order was recorded is a typed SessionFailure inside a
  // returned outcome (an unexpected exception there is an `internal` one). Errors (no session
  // happened): INVALID_ARGUMENT from challenge generation or order signing (a bad plan), the
  // ledger's error when it has no room for the session (RESOURCE_EXHAUSTED "ledger disk full:
  // refusing new sessions ...") or refused the order, INTERNAL for an unexpected exception before the
  // order was recorded, or when not even a minimal verdict could be signed (not expected).
  StatusOr<SessionOutcome> Run(AgentConnector& connector);

  const SessionPlan& plan() const { return plan_; }

 private:
  SessionPlan plan_;
  SessionKeys keys_;
  SessionEnv env_;
};

}  // namespace wipeproof

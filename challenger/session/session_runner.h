// One wipe session, challenger side (design-brief.md "Protocol v1"), over any ProverAgent client:
// TCP in production, an in-memory pipe in tests. Everything timed uses the injected Clock's
// monotonic time; real-time waits (kj::Timer) only bound how long the runner waits for an answer
// that is late anyway (session_plan.h FillWaitLimitUs / RoundWaitLimitUs).
//
// Steps (protocol v2):
//   1. Prepare(): draw every batch of challenges of the session (challenges.h: each device's proof
//      batches, then its holding batches, then any occupancy batches) and compute their expected
//      labels (expected_labels.h) BEFORE any order exists: the seed stays in this process's memory
//      only, and when a device reports filled its first round can leave at once. Of an occupancy
//      window's batches only the first few are computed here; the rest while the window runs. Run() prepares when Prepare() was not
//      called; `serve` calls it ahead of time for the next wave (pipelining).
//   2. sign the order (authority key; it names the challenger key and never the number of rounds),
//      check that the ledger has room for the whole session (RecordSink::CheckRoomForSession; a
//      full ledger refuses the session before any order exists) and record the order. [Wave runs:
//      barrier "ready" (wave_sync.h): every member prepared, then all orders go out together.]
//   3. connect; send startSession and, at once, deviceFilled for every device. Each device's
//      node-signed DeviceFillNotice is verified (signature under the inventory's node key, session,
//      order digest, node key id, device, bytes held against capacity - allowed reserve rounded down
//      to whole chunks (shortCapacity, whatever the agent's note says), the device's own fill
//      deadline (lateFill)); in the same event-loop turn the device is challenged. The FillReport
//      must verify the same way, repeat the notices, and come by the order's fill deadline.
//   4. rounds: each is timed from send to receipt, and its answer is checked (shape, session id and
//      round: protocolError; every label: wrongLabel naming device, round, index, expected and
//      received; the time: lateRound). Two kinds:
//      - holding rounds (q_d / 8 labels per device): a device is probed in the turn its notice
//        verifies, then at random gaps (plan.hold_gap_max_us) while the node or its wave is still
//        filling, and again after its proof rounds until every member of the wave passed its own
//        (wave_sync.h WaveDone), so a node never learns that it will not be asked again. They catch
//        a device that idles or holds other data; the bound does not count them.
//      - proof rounds (q_d per device, every device in each): sent back to back only once this
//        node's report and every notice verified and every member of its wave reported filled
//        (WaveSync::AllFilled), so the members' proof rounds run together after the wave's last
//        fill. The verdict's chunksChecked (and so its bound) counts only these; an auditor tells
//        them apart by shape (every device at exactly labelsPerRound).
//      - occupancy rounds (an order with an occupancy window: docs/protocol.md "Occupancy rounds",
//        occupancy_bound.h): from the last proof round's answer for the window's length, every
//        device at its occupancy_labels after each secret exponential gap, and nothing else; the
//        verdict's occupancy statement counts them.
//      When a device's holding pool is used up it waits unprobed (logged once). A disconnect after a
//      round's indices were sent is the node's failure (disconnected), never a reason to run it
//      again with fresh draws.
//   5. [wave runs: barrier "release"] build and sign the verdict (challenger key; verdict.h). On a
//      pass, send `finish`: the agent returns its node-signed TranscriptDigest, which must verify
//      (badSignature) and match the challenger's own TranscriptHasher digest, the verdict digest
//      and the round count (protocolError); if it does not, a second, failing verdict supersedes
//      the first. On a failure, the runner stops at the first failure and sends `abort` (not after
//      a disconnect);
//   6. record the fill notices, fill report, round log (round_log.h: every round as sent and every
//      answer as received), verdict(s), transcript and a signed Receipt in the ledger (a report or
//      transcript that is malformed or names another session is not recordable there; the failure
//      text describes it instead).
// RPC failures map to: DISCONNECTED -> disconnected; a wipeproof Status from the agent -> orderRefused
// (startSession) or agentAborted (later calls), with its text; other exceptions -> protocolError.
//
// Nothing the agent sends can end the process or leave the order without a verdict: its text (RPC
// error descriptions, the Status it sent, device notes, selectors, digests it got wrong) is cut to
// kMaxPeerTextBytes where it enters (failure.h PeerText); an unexpected exception after the order
// was recorded is an `internal` failure; a verdict that cannot be signed is replaced by a minimal
// `internal` one (no rounds, the first failure's description cut short). Every such verdict is
// signed and recorded like any other.
//
// Thread-safety: one Run() per runner, on the thread that owns the kj event loop of the client.
#pragma once

#include <kj/async-io.h>
#include <kj/async.h>
#include <kj/timer.h>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "challenger/ledger/record_sink.h"
#include "challenger/session/agent_connector.h"
#include "challenger/session/failure.h"
#include "challenger/session/round_costs.h"
#include "challenger/session/round_log.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/verdict.h"
#include "challenger/session/wave_sync.h"
#include "common/clock.h"
#include "proto/signing.h"

namespace wipeproof {

// Where a running session stands, for progress lines (SessionEnv::progress).
struct SessionProgress {
  bool filled = false;              // the node's report and every notice verified
  uint64_t waited_us = 0;           // real time since the order was sent
  uint64_t fill_deadline_us = 0;    // the order's
  uint32_t rounds_answered = 0;     // proof and holding rounds
  uint32_t proof_rounds_done = 0;   // proof rounds answered (every device in each)
  uint32_t proof_rounds_total = 0;  // R
};

struct SessionEnv {
  const Clock* clock = nullptr;                // required: all timing
  kj::Timer* timer = nullptr;                  // required: bounds waits in real time
  kj::WaitScope* wait_scope = nullptr;         // required: the client's event loop
  RecordSink* records = nullptr;               // required: the ledger
  WaveSync* wave = nullptr;                    // set in wave runs
  int threads = 0;                             // expected-label threads; 0 = all cores
  uint64_t expected_labels_test_delay_us = 0;  // tests only: Prepare() takes this much longer
  // Progress of Prepare()'s expected labels (ExpectedLabelsSpec::progress); may be empty.
  std::function<void(uint64_t done_labels, uint64_t total_labels)> expected_labels_progress;
  uint64_t finish_timeout_us = 30'000'000;     // real-time bound on `finish`
  uint64_t abort_timeout_us = 5'000'000;       // real-time bound on `abort`
  // Called on the session's thread at every turn of its wait loop (at least every 100 ms) while
  // the order runs; may be empty. The callee throttles (common/progress_line.h).
  std::function<void(const SessionProgress&)> progress;
  // Gathers each session's own share of its rounds (round_costs.h) when it ends; may be null. Never
  // recorded in the ledger.
  RoundCostStats* round_costs = nullptr;
  // When this session runs as a fiber on an event loop shared with other sessions (wave_run.h
  // TcpSessionOptions::session_loops): `wait_scope` is the fiber's; `barrier_wait` waits for the
  // wave's barriers on the loop (loop_barrier_wait.h; null: this thread blocks there); and
  // `thread_shared`: the thread's CPU is not this session's alone (SessionCosts::thread_cpu_ns
  // stays 0; the loop's owner adds the thread's: RoundCostStats::AddSharedThreadCpu). Not owned.
  WaveSync::BarrierWait* barrier_wait = nullptr;
  bool thread_shared = false;
};

// An environment on `io`'s event loop and timer: everything timed by `clock`, records to `records`,
// `threads` expected-label threads, `wave` null outside wave runs. Callers add the rest (progress).
SessionEnv SessionEnvOn(kj::AsyncIoContext& io, const Clock& clock, RecordSink& records, int threads,
                        WaveSync* wave = nullptr);

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

  int64_t order_sent_unix_us = 0;  // Unix us, the challenger's wall clock, when the order went out (0: never)
  // Microseconds on the session's monotonic clock (Clock::MonotonicMicros) when the order went out, the
  // origin of fill_us and every round's sent_after_order_us; -1: never. A wave's members share one clock.
  int64_t order_sent_monotonic_us = -1;
  uint64_t fill_us = 0;      // order sent to report received
  uint64_t prepare_us = 0;   // drawing challenges and computing expected labels (before the order)
  uint32_t rounds_sent = 0;  // rounds put on the wire (proof and holding)
  std::vector<RoundRecord> rounds;
  std::vector<RoundExchange> exchanges;  // rounds as sent and answers as received, same order
  // The challenger's own share of each round (round_costs.h): for benchmarks, never in the ledger.
  SessionCosts costs;

  Status ledger;                             // OK when every record reached the ledger
  std::vector<uint64_t> ledger_sequences;    // of the records appended, in order
  std::optional<uint64_t> verdict_sequence;  // ledger sequence of the final verdict
};

class ChallengeSet;
class ExpectedLabels;

// Step 1 of a session, before its order exists: the challenges drawn (libsodium's CSPRNG) and their
// expected labels computed; the seed stays in challenger memory. Runs on any thread, with no event
// loop, and may run long before the session (serve prepares a wave's next run while the current
// one runs). Move-only.
struct PreparedSession {
  PreparedSession();
  ~PreparedSession();
  PreparedSession(PreparedSession&&) noexcept;
  PreparedSession& operator=(PreparedSession&&) noexcept;

  SessionPlan plan;
  std::unique_ptr<ChallengeSet> challenges;
  std::unique_ptr<ExpectedLabels> expected;
  Status status;            // OK, or why no session can run (INVALID_ARGUMENT: a bad plan)
  uint64_t prepare_us = 0;  // microseconds on the clock it was prepared with

  // Bytes of expected labels held until the session ends (32 per challenged label).
  uint64_t ExpectedLabelBytes() const;
};

// Blocks until prepared. `threads` as SessionEnv::threads; `test_delay_us` for tests only.
// `progress` as ExpectedLabelsSpec::progress (may be empty).
PreparedSession PrepareSession(SessionPlan plan, const Clock& clock, int threads, uint64_t test_delay_us = 0,
                               std::function<void(uint64_t done_labels, uint64_t total_labels)> progress = {});

class SessionRunner {
 public:
  SessionRunner(SessionPlan plan, SessionKeys keys, SessionEnv env);
  // A session prepared ahead of time (its status may be an error: Run returns it).
  SessionRunner(PreparedSession prepared, SessionKeys keys, SessionEnv env);
  ~SessionRunner();

  // Step 1: PrepareSession for this runner's plan (blocks; no event loop needed, any thread), unless
  // it was prepared ahead. Idempotent; Run() calls it when it was not called. Errors:
  // INVALID_ARGUMENT from challenge generation (a bad plan).
  Status Prepare();

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
  std::optional<PreparedSession> prepared_;  // set once Prepare() ran, or given
};

}  // namespace wipeproof

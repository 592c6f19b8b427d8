// The challenger's own share of each round (issue 23 "Fleet scale"): what its session adds to a
// round's time on its side of the wire, measured on the session's thread, for benchmarks and the
// load test. Nothing here is signed, recorded in the ledger or compared with a deadline: the round
// log's timing rows (round_log.h) stay the protocol's measure of a round, send to receipt.
//
// Per round (RoundCost), on the steady clock (monotonic, nanoseconds) and the thread's CPU clock:
//   - build: from the moment the session decides to send a round (SessionRun::MaybeSendRound, once
//     its early returns are passed: the plan of the next round is part of it) to the moment the
//     request is handed to the RPC layer (just before send()): indices read, message built, its
//     canonical copy for the round log and the transcript. Its CPU span starts once the plan chose
//     parts to send (the planning turns that send nothing are not CPU-timed).
//   - send: the RPC layer's send() call itself (capnp framing; over TLS, encryption and the write
//     when the socket takes it at once). The round's own timing starts before it, so the round log
//     counts it; it is reported apart from build, which is the session's own work.
//   - check: from the answer's receipt (the RPC continuation, on the session's event loop) to the
//     answer checked and logged: its canonical copy for the round log, its fit to the round, every
//     label compared with its expected one, the timing row. Zero for a round without an answer.
//   - wave report: once per session, after the check of its last proof round, the report to its
//     wave that its proof rounds passed (WaveSync::ReportProofDone); the wave's last report wakes
//     every member's loop. No round waits for it (the next is a holding round after a random gap,
//     or none); timed apart, and not part of the added time.
//   - transcript: the round and its answer added to the transcript hash (proto/transcript.h), off
//     the critical path: after the next round went out (or none was due), before its answer is
//     read. Not part of the added time (it overlaps the agent's work on the next round).
// The sum build + check is the challenger's added time per round; it is also split into each
// session's first answered round (cold: its first request, on the RPC connection) and the rest. On a loaded machine the
// wall figures include any time the thread was not running (preemption); the CPU figures do not, and include the
// measurement's own clock reads (CLOCK_THREAD_CPUTIME_ID, ~0.5 us each on a VM).
//
// And the round itself (round): from the round's send to its answer's receipt by the session, what
// the node sees of the challenger's queue too (an answer that waits for a core, or for the other
// sessions on its event loop, before its continuation runs), which build and check do not.
//
// Per session (SessionCosts): the session thread's CPU time (getrusage RUSAGE_THREAD) from the order
// sent to the last round, and the turns of its wait loop in that span (each a wake-up of the thread).
// Sessions that share a thread's event loop count none; that thread's CPU is added whole
// (AddSharedThreadCpu).
//
// RoundCostStats gathers sessions over a process (serve --round_costs=FILE writes its Json()):
// log-linear histograms (32 steps per power of two), so a percentile reads at most ~3% above the
// value it stands for, in bounded memory however long the process runs.
//
// Thread-safety: RoundCost and SessionCosts belong to their session's thread; RoundCostStats is
// thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace wipeproof {

struct RoundCost {
  uint64_t build_ns = 0;
  uint64_t build_cpu_ns = 0;
  uint64_t send_ns = 0;
  uint64_t check_ns = 0;
  uint64_t check_cpu_ns = 0;
  bool answered = false;  // check_* are set (an answer arrived and was checked)
  uint64_t transcript_ns = 0;
  uint64_t wave_report_ns = 0;  // 0: no report after this round
  uint64_t round_ns = 0;        // the round's own time, sent to its answer's receipt (answered rounds)
};

struct SessionCosts {
  std::vector<RoundCost> rounds;  // one per round sent, in round order
  uint64_t thread_cpu_ns = 0;     // the session thread's CPU, order sent to the last round
  uint64_t loop_turns = 0;        // wake-ups of the session's wait loop in that span
};

// Nanoseconds on the steady (monotonic) clock, and of this thread's CPU time (0 if unreadable).
uint64_t SteadyNowNs();
uint64_t ThreadCpuNs();
// This thread's CPU time (user + system) by getrusage(RUSAGE_THREAD), and the whole process's
// (RUSAGE_SELF), in nanoseconds; 0 if unreadable.
uint64_t ThreadRusageCpuNs();
uint64_t ProcessRusageCpuNs();

// A log-linear histogram of non-negative integers: values below 64 exactly, above in 32 steps per
// power of two. Not thread-safe (RoundCostStats guards its own).
class CostHistogram {
 public:
  void Add(uint64_t v);
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  uint64_t sum() const { return sum_; }
  // The smallest bucket's upper edge at or below which a fraction q (0 < q <= 1) of the values lie:
  // exact below 64, otherwise at most 1/32 above the true quantile; max() when q is 1; 0 when empty.
  uint64_t Quantile(double q) const;

  static size_t BucketOf(uint64_t v);
  static uint64_t UpperEdge(size_t bucket);  // the largest value in `bucket`

 private:
  static constexpr size_t kExact = 64;
  static constexpr size_t kSteps = 32;
  static constexpr size_t kBuckets = kExact + (64 - 6) * kSteps;
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t max_ = 0;
  uint64_t sum_ = 0;
};

class RoundCostStats {
 public:
  void Add(const SessionCosts& session);
  // The CPU of a thread that ran several sessions on one event loop (SessionEnv::thread_shared),
  // whose sessions add none of their own: counted in thread_cpu_ns, not per session.
  void AddSharedThreadCpu(uint64_t cpu_ns);

  struct Summary {
    uint64_t sessions = 0;
    uint64_t rounds = 0;    // sent
    uint64_t answered = 0;  // checked
    uint64_t thread_cpu_ns = 0;
    uint64_t loop_turns = 0;
    CostHistogram build, build_cpu, send, check, check_cpu, added, added_cpu, transcript;
    CostHistogram wave_report;            // rounds followed by the session's wave report only
    CostHistogram session_cpu_per_round;  // each session's thread CPU / its rounds, ns (own threads only)
    CostHistogram round;                  // each answered round's time, send to receipt, ns
    // `added` split: each session's first answered round (its code and data cold on the thread)
    // and the rounds after it.
    CostHistogram added_first, added_after_first;
  };
  Summary Snapshot() const;

  // One JSON object: counts; p50, p99, p999 and max in microseconds (3 decimals) of each figure;
  // the session threads' CPU per round (total / rounds, and each session's p50/p99); and, when
  // `process_cpu_ns` > 0, the process's CPU per round (process CPU / rounds sent: everything the
  // process did, its start, preparations, signatures and ledger included).
  std::string Json(uint64_t process_cpu_ns = 0) const;

 private:
  mutable std::mutex mu_;
  Summary s_;
};

}  // namespace wipeproof

// Running sessions over TCP: one node (`wipe --node`), or every node of a wave at once, each on its
// own thread with its own kj event loop and connection, kept in step by a WaveSync (wave_sync.h),
// so each node's rounds happen while every other member holds its labels.
//
// Thread-safety: RunTcpSession runs on the calling thread and creates its own event loop there (a
// thread may have only one: do not call it from a thread that already has one). RunWave starts
// one thread per node and joins them all before it returns. `records` must be thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "challenger/fleet/inventory.h"
#include "challenger/fleet/node_lifecycle.h"
#include "challenger/ledger/record_sink.h"
#include "challenger/parameters/parameter_profile.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/session_runner.h"
#include "common/clock.h"

namespace wipeproof {

struct TcpSessionOptions {
  const Clock* clock = nullptr;  // required
  int threads = 0;               // expected-label threads per session; 0 = all cores
  uint64_t connect_timeout_us = 10'000'000;
  bool round_channel = true;  // rounds on a round channel where the agent has one (tcp_agent_connector.h)
  uint64_t prepare_test_delay_us = 0;  // tests only: preparing each session takes this much longer
  // Wave runs: makes each member's drain/resume hook from its inventory spec; empty =
  // MakeNodeLifecycle (node_lifecycle.h). Tests put fakes here.
  std::function<std::unique_ptr<NodeLifecycle>(const LifecycleSpec&)> lifecycle_factory;
  // Wave runs: set (by serve, on SIGINT/SIGTERM) to abandon a run whose drains end after it: no
  // order goes out, every member drained is resumed (nothing was wiped) and its result says so.
  // Null = never. Not owned.
  const std::atomic<bool>* stop = nullptr;
  // Wave runs: each drain/resume step's line (wave_drain.h); empty = glog.
  std::function<void(const std::string& line)> lifecycle_notice;
  // Each session's expected-label precompute: (node, labels computed, labels in all), from the
  // preparing thread (several nodes of a wave at once); empty = none.
  std::function<void(const std::string& node, uint64_t done, uint64_t total)> prepare_progress;
  // Each session's progress while it runs (SessionEnv::progress); empty = none.
  std::function<void(const std::string& node, const SessionProgress&)> session_progress;
  // Gathers every session's own share of its rounds (SessionEnv::round_costs); null = none. Not owned.
  RoundCostStats* round_costs = nullptr;
  // Wave runs: the event loops the members' sessions share (session_loops.h: each member a fiber
  // on loop i % session_loops); 0 = a thread and a loop of its own for every member.
  int session_loops = 0;
};

// One session of `plan` against the agent at plan.address. `wave` is null outside wave runs.
// Errors: as SessionRunner::Run (no session happened).
StatusOr<SessionOutcome> RunTcpSession(const SessionPlan& plan, const SessionKeys& keys, RecordSink& records,
                                       WaveSync* wave, const TcpSessionOptions& options);

// The result of one node in a wave run: an outcome, or why no session happened.
struct WaveMemberResult {
  std::string node;
  StatusOr<SessionOutcome> outcome = Status(StatusCode::kInternal, "not run");
};

// Every node's plan for one run of `wave`: whole-wave context (declared completeness from the
// inventory), each member's session timeout and holding schedule sized for the largest fill
// deadline of the run (every member may wait for the slowest fill before its rounds end). Plans are
// in the wave's node order; a node whose plan failed has none and its error (logged).
struct WavePlans {
  std::vector<std::optional<SessionPlan>> plans;
  std::vector<Status> errors;  // per node: OK when it has a plan
  bool whole = false;          // every node of the wave has a plan
};
//
// A held wave (inventory.h Wave::hold) with `hold_close_us` > 0: every member's order also asks an
// occupancy window (session_plan.h SetOccupancySchedule) as long as the wave's longest gap
// (period_s + jitter_s, which the inventory states anyway), and the challenger closes it after
// `hold_close_us`, the time to the wave's next run that the schedule drew and keeps secret. A member
// whose window cannot be planned (a pool too large, one chunk) gets that error and no plan.
WavePlans PlanWave(const Inventory& inventory, const Wave& wave, const Profile& profile, const Clock& clock,
                   uint64_t hold_close_us = 0);
// The occupancy window a held wave's member with `plan` asks (PlanWave), closed after `close_us`.
OccupancyRequest HoldRequest(const WaveHold& hold, const Wave& wave, const SessionPlan& plan, uint64_t close_us);

// The labels one run of the planned wave challenges over all its members (each device's R proof
// batches of q_d and its holding batches): PrepareWave computes an expected label for each.
uint64_t ChallengedLabels(const WavePlans& plans);

// Wall microseconds per expected label on this machine, for the estimate of a wave's first
// precompute (serve: scheduler.h PrepareStartDelayUs): the label at a random rank of each of 16
// chunks per thread of a throwaway session (random seed, the profile's format and m), recomputed
// on `threads` threads (0 = all cores) and timed. Each expected label then counts a whole chunk
// graph, an upper bound (a chunk asked twice in a unit is computed once). 0 when it cannot be
// measured.
double MeasureExpectedLabelUs(const Profile& profile, int threads);

// A wave run prepared ahead of time (serve prepares a wave's next run while the current one runs,
// so its orders are not delayed by verification): every node's plan (whole wave, declared
// completeness from the inventory, the largest fill deadline of the run in every session timeout)
// and its PreparedSession (session_runner.h: challenges drawn, expected labels computed), or why it
// has none. Move-only; holds ExpectedLabelBytes() of expected labels until it is run.
struct PreparedWave {
  std::string wave;
  std::vector<std::string> nodes;                        // the wave's node order
  std::vector<std::optional<PreparedSession>> sessions;  // per node: none when its plan failed
  std::vector<Status> plan_errors;                       // per node: why it has no session (OK when it has)
  std::vector<std::optional<LifecycleSpec>> lifecycles;  // per node: its drain/resume hook, if any
  std::vector<std::string> scheduler_names;              // per node: its name in the scheduler
  bool whole = false;                                    // every node of the wave has a session
  uint64_t prepare_us = 0;                               // wall time to prepare every member (in parallel)

  uint64_t ExpectedLabelBytes() const;
};

// Plans every node of `wave` and prepares their sessions, one thread per node (each with
// `options.threads` expected-label threads). Blocks until all are prepared.
// `hold_close_us` as for PlanWave.
PreparedWave PrepareWave(const Inventory& inventory, const Wave& wave, const Profile& profile,
                         const TcpSessionOptions& options, uint64_t hold_close_us = 0);

// Runs a prepared wave: first every member with a drain/resume hook (the inventory's lifecycle) has
// its state read and is drained (wave_drain.h; one out of service already, of unknown state, or
// whose drain fails is not wiped), then its members run concurrently, every order sent at the same
// moment, and after the sessions each drained member is resumed only if it passed as its resume
// policy asks (MemberEndOf), or kept drained with the reason. When `options.stop` is set once the
// drains end, the run is abandoned there: no order, drained members resumed, each member's result
// FAILED_PRECONDITION "not wiped: the challenger is stopping ...", no wave verdict. A node
// whose plan or preparation failed does not run; the others then run without it and their wave is
// not whole. Results are in the wave's node order. A session that fails, however it fails, is that
// node's result; the other nodes' sessions run on (their wave is then not held, wave_sync.h).
// Once every member has its result, the wave's own verdict (session/wave_verdict.h: pass, and the
// statement for the wave's planned memory taken together) is signed and appended to `records`
// (kind WAVE_VERDICT, no session id); it is also put in `*wave_verdict` when that is not null (left
// empty, with the reason logged, when it could not be signed or recorded).
std::vector<WaveMemberResult> RunPreparedWave(PreparedWave prepared, const Wave& wave, const SessionKeys& keys,
                                              RecordSink& records, const TcpSessionOptions& options,
                                              std::optional<proto::SignedEnvelope>* wave_verdict = nullptr);

// PrepareWave, then RunPreparedWave.
std::vector<WaveMemberResult> RunWave(const Inventory& inventory, const Wave& wave, const Profile& profile,
                                      const SessionKeys& keys, RecordSink& records, const TcpSessionOptions& options,
                                      std::optional<proto::SignedEnvelope>* wave_verdict = nullptr);

}  // namespace wipeproof

// Running sessions over TCP: one node (`wipe --node`), or every node of a wave at once, each on its
// own thread with its own kj event loop and connection, kept in step by a WaveSync (wave_sync.h),
// so each node's rounds happen while every other member holds its labels.
//
// Thread-safety: RunTcpSession runs on the calling thread and creates its own event loop there (a
// thread may have only one: do not call it from a thread that already has one). RunWave starts
// one thread per node and joins them all before it returns. `records` must be thread-safe.
#pragma once

#include <string>
#include <vector>

#include "challenger/fleet/inventory.h"
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

// Plans every node of `wave` (whole wave, declared completeness from the inventory, the largest
// fill deadline of the run in every session timeout) and runs them concurrently. A node whose plan
// cannot be built does not run; the others then run without it and their wave is not whole.
// Results are in the wave's node order. A session that fails, however it fails, is that node's
// result; the other nodes' sessions run on (their wave is then not held, wave_sync.h).
std::vector<WaveMemberResult> RunWave(const Inventory& inventory, const Wave& wave, const Profile& profile,
                                      const SessionKeys& keys, RecordSink& records, const TcpSessionOptions& options);

}  // namespace wipeproof

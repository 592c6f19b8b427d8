#include "challenger/fleet/wave_run.h"

#include <glog/logging.h>
#include <kj/async-io.h>
#include <sodium.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_drain.h"
#include "challenger/session/challenges.h"
#include "challenger/session/loop_barrier_wait.h"
#include "challenger/session/session_loops.h"
#include "challenger/session/tcp_agent_connector.h"
#include "challenger/session/wave_verdict.h"
#include "kernels/chunk_verifier.h"
#include "proto/codec.h"

namespace wipeproof {

namespace {

StatusOr<SessionOutcome> RunTcpSessionOn(kj::AsyncIoContext& io, SessionRunner& runner, const SessionKeys& keys,
                                         const TcpSessionOptions& options, kj::WaitScope* fiber_scope = nullptr) {
  const SessionPlan& plan = runner.plan();
  TcpAgentConnector connector(io, plan.address, plan.node_certificate, keys.challenger, options.connect_timeout_us,
                              options.round_channel, fiber_scope);
  return runner.Run(connector);
}

// The precompute progress of `node`'s session, or empty.
std::function<void(uint64_t, uint64_t)> ProgressOf(const std::string& node, const TcpSessionOptions& options) {
  if (!options.prepare_progress) return {};
  return [report = options.prepare_progress, node](uint64_t done, uint64_t total) { report(node, done, total); };
}

SessionEnv EnvOn(kj::AsyncIoContext& io, RecordSink& records, WaveSync* wave, const TcpSessionOptions& options,
                 const std::string& node) {
  SessionEnv env = SessionEnvOn(io, *options.clock, records, options.threads, wave);
  env.expected_labels_test_delay_us = options.prepare_test_delay_us;
  env.expected_labels_progress = ProgressOf(node, options);
  env.round_costs = options.round_costs;
  if (options.session_progress) {
    env.progress = [report = options.session_progress, node](const SessionProgress& p) { report(node, p); };
  }
  return env;
}

// One prepared member on its own thread's event loop.
StatusOr<SessionOutcome> RunPreparedTcpSession(PreparedSession prepared, const SessionKeys& keys, RecordSink& records,
                                               WaveSync* wave, const TcpSessionOptions& options) {
  try {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    const std::string node = prepared.plan.node_name;
    SessionRunner runner(std::move(prepared), keys, EnvOn(io, records, wave, options, node));
    return RunTcpSessionOn(io, runner, keys, options);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("event loop: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("event loop: ") + e.what());
  }
}

// One prepared member as a fiber on `io`'s loop, shared with other members (session_loops.h).
StatusOr<SessionOutcome> RunPreparedTcpSessionInFiber(PreparedSession prepared, const SessionKeys& keys,
                                                      RecordSink& records, WaveSync& wave,
                                                      const TcpSessionOptions& options, kj::AsyncIoContext& io,
                                                      kj::WaitScope& fiber_scope, LoopBarrierWait& barrier) {
  const std::string node = prepared.plan.node_name;
  SessionEnv env = EnvOn(io, records, &wave, options, node);
  env.wait_scope = &fiber_scope;
  env.barrier_wait = &barrier;
  env.thread_shared = true;
  SessionRunner runner(std::move(prepared), keys, env);
  return RunTcpSessionOn(io, runner, keys, options, &fiber_scope);
}

// One wave member's session: one node's session never ends the others' (nor the process), so
// whatever escapes `run` is that member's error, named after `where`.
StatusOr<SessionOutcome> MemberOutcome(const char* where, const std::function<StatusOr<SessionOutcome>()>& run) {
  try {
    return run();
  } catch (const kj::Exception& e) {
    return InternalError(std::string(where) + ": " + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string(where) + ": " + e.what());
  } catch (...) {
    return InternalError(std::string(where) + ": unknown exception");
  }
}

}  // namespace

StatusOr<SessionOutcome> RunTcpSession(const SessionPlan& plan, const SessionKeys& keys, RecordSink& records,
                                       WaveSync* wave, const TcpSessionOptions& options) {
  try {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    SessionRunner runner(plan, keys, EnvOn(io, records, wave, options, plan.node_name));
    return RunTcpSessionOn(io, runner, keys, options);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("event loop: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("event loop: ") + e.what());
  }
}

uint64_t PreparedWave::ExpectedLabelBytes() const {
  uint64_t bytes = 0;
  for (const auto& s : sessions) bytes += s ? s->ExpectedLabelBytes() : 0;
  return bytes;
}

OccupancyRequest HoldRequest(const WaveHold& hold, const Wave& wave, const SessionPlan& plan, uint64_t close_us) {
  OccupancyRequest request =
      OccupancyRequestOf(plan, wave.period_s + wave.jitter_s, hold.mean_gap_s, hold.shortfall, hold.labels_per_round);
  request.close_us = std::min(close_us, request.window_us);
  return request;
}

WavePlans PlanWave(const Inventory& inventory, const Wave& wave, const Profile& profile, const Clock& clock,
                   uint64_t hold_close_us) {
  WaveContext context;
  context.name = wave.name;
  context.declared_complete = wave.complete;
  context.wave_nodes = wave.nodes.size();
  context.whole_wave_in_session = true;

  WavePlans out;
  out.plans.resize(wave.nodes.size());
  out.errors.assign(wave.nodes.size(), Status::Ok());
  uint64_t wave_fill_deadline = 0;
  for (size_t i = 0; i < wave.nodes.size(); ++i) {
    auto plan = BuildPlan(inventory, wave.nodes[i], profile, context, clock);
    if (!plan.ok()) {
      // INFO: the error goes back as that member's outcome, which serve prints ("no session: ...").
      LOG(INFO) << "wave " << wave.name << ": node " << wave.nodes[i] << " not run: " << plan.status().ToString();
      out.errors[i] = plan.status();
      continue;
    }
    wave_fill_deadline = std::max(wave_fill_deadline, plan->fill_deadline_us);
    out.plans[i] = std::move(plan).value();
  }
  size_t planned = 0;
  for (const auto& plan : out.plans) planned += plan.has_value();
  out.whole = planned == wave.nodes.size();
  for (auto& plan : out.plans) {
    if (!plan) continue;
    plan->wave.wave_fill_deadline_us = wave_fill_deadline;
    plan->wave.whole_wave_in_session = out.whole;
    plan->wave_complete = plan->wave.declared_complete && out.whole && RoundDeadlineWithinReach(*plan);
    SetHoldingSchedule(&*plan, wave_fill_deadline);
  }
  if (wave.hold && hold_close_us > 0) {
    for (size_t i = 0; i < out.plans.size(); ++i) {
      if (!out.plans[i]) continue;
      Status held = SetOccupancySchedule(&*out.plans[i], HoldRequest(*wave.hold, wave, *out.plans[i], hold_close_us));
      if (!held.ok()) {
        LOG(INFO) << "wave " << wave.name << ": node " << wave.nodes[i] << " not run: " << held.ToString();
        out.errors[i] = held.WithContext("the wave's hold (inventory)");
        out.plans[i].reset();
        out.whole = false;
      }
    }
    // A member dropped: the others' plans still say the whole wave is in session; plan again without it.
    if (!out.whole) {
      for (auto& plan : out.plans) {
        if (!plan) continue;
        plan->wave.whole_wave_in_session = false;
        plan->wave_complete = false;
      }
    }
  }
  return out;
}

uint64_t ChallengedLabels(const WavePlans& plans) {
  uint64_t labels = 0;
  for (const auto& plan : plans.plans) {
    if (!plan) continue;
    for (const PlannedDevice& d : plan->devices) {
      labels += uint64_t{plan->profile.rounds} * d.labels_per_round + uint64_t{plan->holding_batches} * d.hold_labels;
    }
  }
  return labels;
}

double MeasureExpectedLabelUs(const Profile& profile, int threads) {
  const int t = threads > 0 ? threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const uint64_t chunks = uint64_t{16} * static_cast<uint64_t>(t);
  const uint64_t m = profile.chunk_labels;
  if (m == 0) return 0;
  RegionSpec region;
  region.format = profile.format;
  randombytes_buf(region.seed, sizeof region.seed);
  region.chunk_labels = profile.chunk_labels;
  region.count = chunks * m;
  std::vector<uint64_t> indices(chunks);
  for (uint64_t c = 0; c < chunks; ++c) indices[c] = c * m + UniformBelow(m);
  std::vector<uint8_t> out(chunks * kLabelBytes);
  const auto start = std::chrono::steady_clock::now();
  if (!RecomputeLabels(region, indices.data(), indices.size(), out.data(), t).ok()) return 0;
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  return us / static_cast<double>(chunks);
}

PreparedWave PrepareWave(const Inventory& inventory, const Wave& wave, const Profile& profile,
                         const TcpSessionOptions& options, uint64_t hold_close_us) {
  const int64_t start = options.clock->MonotonicMicros();
  PreparedWave out;
  out.wave = wave.name;
  out.nodes = wave.nodes;
  out.sessions.resize(wave.nodes.size());
  for (const std::string& node : wave.nodes) {
    out.lifecycles.push_back(inventory.LifecycleOf(node));
    const InventoryNode* n = inventory.FindNode(node);
    out.scheduler_names.push_back(n != nullptr && !n->scheduler_name.empty() ? n->scheduler_name : node);
  }
  WavePlans planned = PlanWave(inventory, wave, profile, *options.clock, hold_close_us);
  out.plan_errors = std::move(planned.errors);
  out.whole = planned.whole;
  std::vector<std::optional<SessionPlan>>& plans = planned.plans;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i]) continue;
    threads.emplace_back([&, i] {
      const std::string node = plans[i]->node_name;
      out.sessions[i].emplace(
          PrepareSession(std::move(*plans[i]), *options.clock, options.threads, 0, ProgressOf(node, options)));
    });
  }
  for (std::thread& t : threads) t.join();
  out.prepare_us = static_cast<uint64_t>(options.clock->MonotonicMicros() - start);
  return out;
}

std::vector<WaveMemberResult> RunWave(const Inventory& inventory, const Wave& wave, const Profile& profile,
                                      const SessionKeys& keys, RecordSink& records, const TcpSessionOptions& options,
                                      std::optional<proto::SignedEnvelope>* wave_verdict) {
  return RunPreparedWave(PrepareWave(inventory, wave, profile, options), wave, keys, records, options, wave_verdict);
}

std::vector<WaveMemberResult> RunPreparedWave(PreparedWave prepared, const Wave& wave, const SessionKeys& keys,
                                              RecordSink& records, const TcpSessionOptions& options,
                                              std::optional<proto::SignedEnvelope>* wave_verdict) {
  std::vector<WaveMemberResult> results(prepared.nodes.size());
  std::vector<std::string> members;
  for (size_t i = 0; i < prepared.nodes.size(); ++i) {
    results[i].node = prepared.nodes[i];
    if (!prepared.sessions[i]) {
      results[i].outcome = prepared.plan_errors[i];
    } else if (!prepared.sessions[i]->status.ok()) {
      results[i].outcome = prepared.sessions[i]->status;
    } else {
      members.push_back(prepared.nodes[i]);
    }
  }
  // Drain every member that has a hook before any order goes out; a member that could not be
  // drained is not wiped.
  std::vector<std::unique_ptr<NodeLifecycle>> hooks(prepared.nodes.size());
  std::vector<DrainMember> drain_members(prepared.nodes.size());
  for (size_t i = 0; i < prepared.nodes.size(); ++i) {
    drain_members[i].node = prepared.nodes[i];
    drain_members[i].scheduler_name =
        i < prepared.scheduler_names.size() ? prepared.scheduler_names[i] : prepared.nodes[i];
    const bool runs = prepared.sessions[i] && prepared.sessions[i]->status.ok();
    if (!runs || i >= prepared.lifecycles.size() || !prepared.lifecycles[i]) continue;
    hooks[i] = options.lifecycle_factory ? options.lifecycle_factory(*prepared.lifecycles[i])
                                         : MakeNodeLifecycle(*prepared.lifecycles[i]);
    drain_members[i].hook = hooks[i].get();
  }
  WaveDrain drain(wave.name, drain_members, options.lifecycle_notice);
  const std::vector<Status> drained = drain.DrainAll();
  for (size_t i = 0; i < prepared.nodes.size(); ++i) {
    if (drained[i].ok()) continue;
    results[i].outcome = drained[i];
    prepared.sessions[i].reset();
    members.erase(std::remove(members.begin(), members.end(), prepared.nodes[i]), members.end());
  }
  if (options.stop != nullptr && options.stop->load()) {
    // Stopped during the drains: no order goes out (an order sent now would outlive the process
    // before its verdict), and the nodes taken are given back, as nothing was wiped.
    const std::string why = "the challenger is stopping: the run was abandoned after the drain, before any order";
    drain.Abandon(why);
    for (size_t i = 0; i < prepared.nodes.size(); ++i) {
      if (!prepared.sessions[i] || !prepared.sessions[i]->status.ok()) continue;
      results[i].outcome = FailedPreconditionError("not wiped: " + why);
    }
    LOG(WARNING) << "wave " << wave.name << ": " << why << "; no wave verdict";
    return results;
  }
  const bool whole = prepared.whole && members.size() == prepared.nodes.size();
  if (!whole) {
    // A member left out after planning (its session could not be prepared, or its drain failed or
    // found it out of service): it is not wiped and may hold the others' labels, so no member's
    // verdict may say the whole wave was in session. The orders are signed when the sessions run,
    // after this; plan-time omissions were already marked by PlanWave.
    for (auto& session : prepared.sessions) {
      if (!session || !session->status.ok()) continue;
      session->plan.wave.whole_wave_in_session = false;
      session->plan.wave_complete = false;
    }
  }
  // The wave verdict says complete only when every member's order does (each within the reach the
  // wave's completeness was established for: RoundDeadlineWithinReach).
  bool members_complete = true;
  for (const auto& session : prepared.sessions) {
    if (session && session->status.ok()) members_complete = members_complete && session->plan.wave_complete;
  }
  WaveSync sync(members);
  std::vector<size_t> running;  // members whose sessions run, by index into prepared.nodes
  for (size_t i = 0; i < prepared.sessions.size(); ++i) {
    if (prepared.sessions[i] && prepared.sessions[i]->status.ok()) running.push_back(i);
  }
  if (options.session_loops > 0) {
    RunOnSessionLoops(
        running.size(), options.session_loops,
        [&](size_t k, kj::AsyncIoContext& io, kj::WaitScope& fiber_scope) {
          const size_t i = running[k];
          LoopBarrierWait barrier(sync, fiber_scope, io.provider->getTimer());
          results[i].outcome = MemberOutcome("session fiber", [&] {
            return RunPreparedTcpSessionInFiber(std::move(*prepared.sessions[i]), keys, records, sync, options, io,
                                                fiber_scope, barrier);
          });
          try {
            sync.Leave(prepared.nodes[i], &barrier);  // no-op when the session runner arrived at both barriers
          } catch (...) {
            // The loop could not wait (it is going away): arrive without waiting, so that no other
            // member waits for this one, and never block the loop's thread.
            WaveSync::ArriveOnlyWait arrive_only;
            sync.Leave(prepared.nodes[i], &arrive_only);
          }
        },
        [&](size_t k, const std::string& why) {
          // Its loop failed before its session started: no order went out; the others must not wait.
          const size_t i = running[k];
          results[i].outcome = InternalError("session loop: " + why + "; no session ran");
          WaveSync::ArriveOnlyWait arrive_only;
          sync.Leave(prepared.nodes[i], &arrive_only);
        },
        options.round_costs);
  } else {
    std::vector<std::thread> threads;
    for (size_t i : running) {
      threads.emplace_back([&, i] {
        results[i].outcome = MemberOutcome("session thread", [&] {
          return RunPreparedTcpSession(std::move(*prepared.sessions[i]), keys, records, &sync, options);
        });
        sync.Leave(prepared.nodes[i]);  // no-op when the session runner arrived at both barriers
      });
    }
    for (std::thread& t : threads) t.join();
  }

  // Give back only the members that passed; the others stay drained with their failure's reason.
  std::vector<MemberEnd> ends(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const bool has_spec = i < prepared.lifecycles.size() && prepared.lifecycles[i];
    ends[i] = MemberEndOf(results[i].outcome, has_spec ? prepared.lifecycles[i]->resume : ResumePolicy::kOnBound);
  }
  drain.Settle(ends);

  std::vector<WaveMemberVerdict> verdicts;
  for (const WaveMemberResult& r : results) {
    WaveMemberVerdict v;
    v.node = r.node;
    if (r.outcome.ok() && !r.outcome->verdict.payload.empty()) {
      v.has_verdict = true;
      v.verdict = r.outcome->verdict;
      v.order_sent_monotonic_us = r.outcome->order_sent_monotonic_us;
    }
    verdicts.push_back(std::move(v));
  }
  if (std::none_of(verdicts.begin(), verdicts.end(), [](const WaveMemberVerdict& v) { return v.has_verdict; })) {
    // No member ran a session (each out of service, not drained, or unreachable): a wave verdict names
    // its members' verdicts, so there is none to sign; each member's result says why it was skipped.
    LOG(WARNING) << "wave " << wave.name << ": no member was wiped in this run: no wave verdict";
    return results;
  }
  auto signed_wave = SignWaveVerdict(wave.name, wave.complete && whole && members_complete, verdicts, keys.challenger,
                                     options.clock->UnixMicros());
  if (!signed_wave.ok()) {
    LOG(ERROR) << "wave " << wave.name << ": no wave verdict: " << signed_wave.status().ToString();
    return results;
  }
  auto recorded = records.Append(proto::LedgerRecordKind::WAVE_VERDICT,
                                 proto::AsView(proto::EncodeEnvelope(*signed_wave)), proto::ByteView());
  if (!recorded.ok()) {
    LOG(ERROR) << "wave " << wave.name << ": the ledger refused the wave verdict: " << recorded.status().ToString();
    return results;
  }
  auto parsed = proto::ParseMessage<proto::WaveVerdict>(proto::AsView(signed_wave->payload));
  if (parsed.ok()) {
    LOG(INFO) << "wave " << wave.name << ": " << (parsed->root().getPass() ? "PASS" : "FAIL") << " (ledger #"
              << *recorded << "); " << parsed->root().getStatement().cStr();
  }
  if (wave_verdict != nullptr) *wave_verdict = *std::move(signed_wave);
  return results;
}

}  // namespace wipeproof

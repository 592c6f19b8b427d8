#include "challenger/fleet/wave_run.h"

#include <glog/logging.h>
#include <kj/async-io.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <thread>

#include "challenger/fleet/plan_builder.h"
#include "challenger/session/tcp_agent_connector.h"

namespace wipeproof {

namespace {

StatusOr<SessionOutcome> RunTcpSessionOn(kj::AsyncIoContext& io, const SessionPlan& plan, const SessionKeys& keys,
                                         RecordSink& records, WaveSync* wave, const TcpSessionOptions& options) {
  TcpAgentConnector connector(io, plan.address, plan.node_certificate, keys.challenger, options.connect_timeout_us);
  SessionEnv env;
  env.clock = options.clock;
  env.timer = &io.provider->getTimer();
  env.wait_scope = &io.waitScope;
  env.records = &records;
  env.wave = wave;
  env.threads = options.threads;
  SessionRunner runner(plan, keys, env);
  return runner.Run(connector);
}

}  // namespace

StatusOr<SessionOutcome> RunTcpSession(const SessionPlan& plan, const SessionKeys& keys, RecordSink& records,
                                       WaveSync* wave, const TcpSessionOptions& options) {
  try {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    return RunTcpSessionOn(io, plan, keys, records, wave, options);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("event loop: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("event loop: ") + e.what());
  }
}

std::vector<WaveMemberResult> RunWave(const Inventory& inventory, const Wave& wave, const Profile& profile,
                                      const SessionKeys& keys, RecordSink& records, const TcpSessionOptions& options) {
  std::vector<WaveMemberResult> results(wave.nodes.size());
  WaveContext context;
  context.name = wave.name;
  context.declared_complete = wave.complete;
  context.wave_nodes = wave.nodes.size();
  context.whole_wave_in_session = true;

  std::vector<std::optional<SessionPlan>> plans(wave.nodes.size());
  uint64_t wave_fill_deadline = 0;
  for (size_t i = 0; i < wave.nodes.size(); ++i) {
    results[i].node = wave.nodes[i];
    auto plan = BuildPlan(inventory, wave.nodes[i], profile, context, *options.clock);
    if (!plan.ok()) {
      LOG(ERROR) << "wave " << wave.name << ": node " << wave.nodes[i] << " not run: " << plan.status().ToString();
      results[i].outcome = plan.status();
      continue;
    }
    wave_fill_deadline = std::max(wave_fill_deadline, plan->fill_deadline_us);
    plans[i] = std::move(plan).value();
  }
  std::vector<std::string> members;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i]) members.push_back(wave.nodes[i]);
  }
  const bool whole = members.size() == wave.nodes.size();
  for (auto& plan : plans) {
    if (!plan) continue;
    // Every member may wait for the slowest fill of the run before its rounds start.
    plan->wave.wave_fill_deadline_us = wave_fill_deadline;
    plan->wave.whole_wave_in_session = whole;
    plan->wave_complete = plan->wave.declared_complete && whole;
    SetHoldingSchedule(&*plan, wave_fill_deadline);
  }
  WaveSync sync(members);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i]) continue;
    // One node's session never ends the others' (nor the process): whatever escapes is its error.
    threads.emplace_back([&, i] {
      try {
        results[i].outcome = RunTcpSession(*plans[i], keys, records, &sync, options);
      } catch (const std::exception& e) {
        results[i].outcome = InternalError(std::string("session thread: ") + e.what());
      } catch (...) {
        results[i].outcome = InternalError("session thread: unknown exception");
      }
      sync.Leave(wave.nodes[i]);  // no-op when the session runner arrived at both barriers
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace wipeproof

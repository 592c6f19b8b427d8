#include "challenger/selftest/selftest_wave.h"

#include <kj/async-io.h>

#include <atomic>
#include <thread>
#include <utility>
#include <vector>

#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/record_sink.h"
#include "challenger/session/pipe_agent_connector.h"
#include "challenger/session/wave_sync.h"
#include "challenger/session/wave_verdict.h"

namespace wipeproof::selftest {

namespace {

// One member on its own thread: its own event loop, simulated clock and pipe to its agent.
StatusOr<SessionOutcome> RunMember(SessionPlan plan, const SessionKeys& keys, const proto::KeyPair& node,
                                   adversary::CheatingAgentOptions options, WaveSync& sync, int threads) {
  try {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    FakeClock clock;
    options.sim_clock = &clock;
    options.timer = &io.provider->getTimer();
    kj::Own<proto::ProverAgent::Server> agent = kj::heap<adversary::CheatingAgent>(
        adversary::AgentKeys{keys.authority.public_key, keys.challenger.public_key, node}, std::move(options));
    PipeAgentConnector pipe(io, kj::mv(agent));
    DiscardingRecordSink sink;
    SessionRunner runner(std::move(plan), keys, SessionEnvOn(io, clock, sink, threads, &sync));
    return runner.Run(pipe);
  } catch (const kj::Exception& e) {
    return InternalError(std::string("selftest wave member: ") + e.getDescription().cStr());
  } catch (const std::exception& e) {
    return InternalError(std::string("selftest wave member: ") + e.what());
  }
}

}  // namespace

StatusOr<WaveOfTwoRun> RunWaveOfTwo(WaveOfTwoSetup setup) {
  if (setup.inventory.waves.empty() || setup.inventory.waves[0].nodes.size() != 2) {
    return InvalidArgumentError("selftest wave: the inventory's first wave must have two nodes");
  }
  const Wave& wave = setup.inventory.waves[0];
  FakeClock planning_clock;
  WavePlans planned = PlanWave(setup.inventory, wave, setup.profile, planning_clock);
  if (!planned.whole) return InvalidArgumentError("selftest wave: " + planned.errors[0].ToString());

  // node-b fills once node-a has dropped (or once node-a's session is over, whatever happened).
  std::atomic<bool> released{false}, released_by_drop{false};
  adversary::CheatingAgentOptions a = std::move(setup.agent_a);
  a.deviation.on_drop = [previous = a.deviation.on_drop, &released, &released_by_drop] {
    if (previous) previous();
    released_by_drop.store(true);
    released.store(true);
  };
  adversary::CheatingAgentOptions b;
  b.timing = setup.timing_b;
  b.rng_seed = setup.rng_seed_b;
  b.fill_gate = [&released] { return released.load(); };
  adversary::AgentLog seen_b;
  b.log = &seen_b;

  WaveSync sync(wave.nodes);
  StatusOr<SessionOutcome> outcome_a = InternalError("not run"), outcome_b = InternalError("not run");
  std::thread thread_a([&] {
    outcome_a = RunMember(std::move(*planned.plans[0]), setup.keys, setup.node_a, std::move(a), sync, setup.threads);
    released.store(true);
    sync.Leave(wave.nodes[0]);
  });
  std::thread thread_b([&] {
    outcome_b = RunMember(std::move(*planned.plans[1]), setup.keys, setup.node_b, std::move(b), sync, setup.threads);
    sync.Leave(wave.nodes[1]);
  });
  thread_a.join();
  thread_b.join();
  if (!outcome_a.ok()) return outcome_a.status().WithContext("node " + wave.nodes[0]);
  if (!outcome_b.ok()) return outcome_b.status().WithContext("node " + wave.nodes[1]);

  WaveOfTwoRun run;
  run.a = *std::move(outcome_a);
  run.b = *std::move(outcome_b);
  run.neighbour_released_by_drop = released_by_drop.load();
  run.seen_b = seen_b;  // its thread has ended
  std::vector<WaveMemberVerdict> members;
  for (const SessionOutcome* o : {&run.a, &run.b}) {
    WaveMemberVerdict v;
    v.node = o->node_name;
    v.has_verdict = !o->verdict.payload.empty();
    v.verdict = o->verdict;
    members.push_back(std::move(v));
  }
  WP_ASSIGN_OR_RETURN(
      const proto::SignedEnvelope signed_wave,
      SignWaveVerdict(wave.name, wave.complete, members, setup.keys.challenger, planning_clock.UnixMicros()));
  auto parsed = proto::VerifyAndParse<proto::WaveVerdict>(signed_wave, setup.keys.challenger.public_key);
  run.wave_pass = parsed.ok() && parsed->root().getPass();
  return run;
}

}  // namespace wipeproof::selftest

// A wave's sessions on a few shared event loops (challenger/session/session_loops.h,
// TcpSessionOptions::session_loops): each member a fiber, over real loopback TCP and TLS 1.3 against
// agents served from their own threads. The wave's barriers must not block a loop (the first member
// to arrive would stop the others on its loop from arriving: the run would never end), every member
// keeps its own verdict, a cheater among honest members on one loop is still caught, and the loops'
// CPU is counted once, not once per session.
#include "challenger/session/session_loops.h"

#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/session/loop_barrier_wait.h"
#include "challenger/session/round_costs.h"
#include "challenger/session/tcp_agent_connector.h"
#include "challenger/session/wave_sync.h"
#include "common/clock.h"
#include "proto/codec.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

// A barrier that blocks its loop hangs the run rather than failing it: end the test binary with a
// message after `limit` instead of waiting for ctest's timeout.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit)
      : thread_([this, limit] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!done_cv_.wait_for(lock, limit, [this] { return done_; })) {
            std::fprintf(stderr, "session_loops_test: still running after %lld s: a loop is blocked\n",
                         static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    done_cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

constexpr std::chrono::seconds kRunLimit{120};

Profile LoopsProfile() {
  Profile p = testing::TestProfile();
  p.rounds = 8;
  p.round_deadline_us = 2'000'000;  // loopback, several sessions on one loop of a shared machine: generous
  return p;
}

// A wave of `count` host-only nodes "node-0".."node-{count-1}" (keys and certificates 0x50 + i),
// each served by agents[i]; declared complete.
Inventory WaveInventory(const std::vector<std::unique_ptr<adversary::LoopbackAgentServer>>& agents) {
  const Inventory base = testing::TestInventory();
  Inventory inventory;
  inventory.reserve_bytes_by_model = base.reserve_bytes_by_model;
  Wave wave = base.waves[0];
  wave.nodes.clear();
  for (size_t i = 0; i < agents.size(); ++i) {
    InventoryNode node = base.nodes[1];  // host only
    node.name = "node-" + std::to_string(i);
    node.address = agents[i]->address();
    node.public_key = testing::TestKey(static_cast<uint8_t>(0x50 + i)).public_key;
    node.certificate = testing::TestCertificate(static_cast<uint8_t>(0x50 + i));
    inventory.nodes.push_back(node);
    wave.nodes.push_back(node.name);
  }
  inventory.waves.push_back(wave);
  SealInventory(&inventory);
  return inventory;
}

struct WaveOnLoops {
  std::vector<WaveMemberResult> results;
  std::optional<proto::SignedEnvelope> wave_verdict;
  RoundCostStats::Summary costs;
};

// Runs a wave of `count` members, member `cheat` (if below count) serving BlankChunks, on `loops`
// event loops (0: a thread per member).
WaveOnLoops RunWaveOnLoops(size_t count, int loops, size_t cheat = SIZE_MAX) {
  std::vector<std::unique_ptr<adversary::LoopbackAgentServer>> agents;
  for (size_t i = 0; i < count; ++i) {
    agents.push_back(testing::ServeTestAgent(testing::TestKey(static_cast<uint8_t>(0x50 + i)),
                                             i == cheat ? testing::BlankChunks() : adversary::Deviation{}));
  }
  const Inventory inventory = WaveInventory(agents);
  testing::MemoryRecordSink sink;
  RoundCostStats costs;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.session_loops = loops;
  options.round_costs = &costs;
  WaveOnLoops out;
  out.results = RunWave(inventory, inventory.waves[0], LoopsProfile(),
                        SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options, &out.wave_verdict);
  out.costs = costs.Snapshot();
  return out;
}

bool WaveCompleteHeld(const SessionOutcome& outcome) {
  for (const AssumptionResult& r : outcome.summary.assumptions) {
    if (r.name == kWaveComplete) return r.held;
  }
  return false;
}

// Five members on two loops (three on one, two on the other) all pass, each with its own verdict,
// and the wave verdict is a complete pass: the barriers opened for members that share a thread.
TEST(SessionLoopsTest, AWholeWaveOnTwoLoopsPasses) {
  Watchdog watchdog(kRunLimit);
  WaveOnLoops run = RunWaveOnLoops(5, 2);
  ASSERT_EQ(run.results.size(), 5u);
  std::vector<std::string> session_ids;
  for (const WaveMemberResult& r : run.results) {
    ASSERT_TRUE(r.outcome.ok()) << r.node << ": " << r.outcome.status().ToString();
    EXPECT_TRUE(r.outcome->pass) << r.node << ": " << r.outcome->failure.Describe();
    EXPECT_GE(r.outcome->rounds.size(), LoopsProfile().rounds) << r.node;
    for (const RoundRecord& round : r.outcome->rounds) EXPECT_TRUE(round.all_correct && round.deadline_met) << r.node;
    EXPECT_TRUE(WaveCompleteHeld(*r.outcome)) << r.node;
    session_ids.push_back(std::string(r.outcome->session_id.begin(), r.outcome->session_id.end()));
  }
  std::sort(session_ids.begin(), session_ids.end());
  EXPECT_EQ(std::unique(session_ids.begin(), session_ids.end()), session_ids.end());
  ASSERT_TRUE(run.wave_verdict.has_value());
  auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*run.wave_verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(wave.ok()) << wave.status().ToString();
  EXPECT_TRUE(wave->root().getPass());
  EXPECT_TRUE(wave->root().getComplete());
  EXPECT_EQ(wave->root().getNodeNames().size(), 5u);
  // The sessions count no CPU of their own (their threads are shared); the two loops' threads do.
  EXPECT_EQ(run.costs.sessions, 5u);
  EXPECT_EQ(run.costs.session_cpu_per_round.count(), 0u);
  EXPECT_GT(run.costs.thread_cpu_ns, 0u);
  EXPECT_EQ(run.costs.round.count(), run.costs.answered);
  EXPECT_GT(run.costs.answered, 5u * LoopsProfile().rounds - 1);
}

// One loop for three members, the middle one keeping a tenth of its memory blank: it fails on a
// wrong label, the others pass, and their verdicts say the wave was not held whole, naming it.
TEST(SessionLoopsTest, ACheaterSharingALoopWithHonestMembersIsCaught) {
  Watchdog watchdog(kRunLimit);
  WaveOnLoops run = RunWaveOnLoops(3, 1, /*cheat=*/1);
  ASSERT_EQ(run.results.size(), 3u);
  for (const WaveMemberResult& r : run.results) ASSERT_TRUE(r.outcome.ok()) << r.outcome.status().ToString();
  EXPECT_FALSE(run.results[1].outcome->pass);
  EXPECT_EQ(run.results[1].outcome->failure.reason, proto::FailureReason::WRONG_LABEL);
  for (size_t i : {size_t{0}, size_t{2}}) {
    const SessionOutcome& o = *run.results[i].outcome;
    EXPECT_TRUE(o.pass) << run.results[i].node << ": " << o.failure.Describe();
    bool named = false;
    for (const AssumptionResult& a : o.summary.assumptions) {
      if (a.name != kWaveComplete) continue;
      EXPECT_FALSE(a.held);
      named = a.detail.find("node-1") != std::string::npos;
    }
    EXPECT_TRUE(named) << run.results[i].node;
  }
  ASSERT_TRUE(run.wave_verdict.has_value());
  auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*run.wave_verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(wave.ok());
  EXPECT_FALSE(wave->root().getPass());
}

// A member whose agent is not there (its address refuses connections) fails as disconnected on a
// loop it shares with an honest member, which still passes: a session that ends early leaves the
// barriers without holding up its loop.
TEST(SessionLoopsTest, AnUnreachableMemberDoesNotHoldUpItsLoop) {
  Watchdog watchdog(kRunLimit);
  std::vector<std::unique_ptr<adversary::LoopbackAgentServer>> agents;
  agents.push_back(testing::ServeTestAgent(testing::TestKey(0x50)));
  agents.push_back(testing::ServeTestAgent(testing::TestKey(0x51)));
  Inventory inventory = WaveInventory(agents);
  const std::string gone = agents[1]->address();
  agents[1].reset();  // nothing listens there now
  inventory.nodes[1].address = gone;
  SealInventory(&inventory);
  testing::MemoryRecordSink sink;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.session_loops = 1;
  options.connect_timeout_us = 5'000'000;
  auto results = RunWave(inventory, inventory.waves[0], LoopsProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options, nullptr);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  ASSERT_TRUE(results[1].outcome.ok()) << results[1].outcome.status().ToString();
  EXPECT_TRUE(results[0].outcome->pass) << results[0].outcome->failure.Describe();
  EXPECT_EQ(results[1].outcome->failure.reason, proto::FailureReason::DISCONNECTED);
  EXPECT_FALSE(WaveCompleteHeld(*results[0].outcome));
}

// A loop held up by another session's synchronous work (here 50 ms at a time, over and over) while a
// round is in flight delays reading its answer: the round is timed to that read, so it is late
// (lateRound), never passed on the time its answer reached the socket.
// threat-model: T-SHARED-LOOP
TEST(SessionLoopsTest, ALoopHeldUpByAnotherSessionMakesTheRoundLateNeverOnTime) {
  Watchdog watchdog(kRunLimit);
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.waves.clear();
  Profile profile = LoopsProfile();
  profile.round_deadline_us = 10'000;
  auto plan = BuildPlan(inventory, "node-a", profile, LoneSessionWaveContext(inventory, "node-a"), SystemClock());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  testing::MemoryRecordSink sink;
  const SessionKeys keys{testing::TestKey(0x11), testing::TestKey(0x22)};
  constexpr auto kHeldUp = std::chrono::milliseconds(50);
  std::atomic<bool> session_over{false};
  StatusOr<SessionOutcome> outcome = InternalError("not run");
  RunOnSessionLoops(
      2, 1,
      [&](size_t i, kj::AsyncIoContext& io, kj::WaitScope& fiber_scope) {
        if (i == 1) {
          // The other "session": lets the loop poll once, then holds it.
          while (!session_over.load()) {
            io.provider->getTimer().afterDelay(1 * kj::MICROSECONDS).wait(fiber_scope);
            std::this_thread::sleep_for(kHeldUp);
          }
          return;
        }
        SessionEnv env = SessionEnvOn(io, SystemClock(), sink, 1);
        env.wait_scope = &fiber_scope;
        env.thread_shared = true;
        SessionRunner runner(*plan, keys, env);
        TcpAgentConnector connector(io, plan->address, plan->node_certificate, keys.challenger, 30'000'000, true,
                                    &fiber_scope);
        outcome = runner.Run(connector);
        session_over = true;
      },
      {}, nullptr);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::LATE_ROUND) << outcome->failure.Describe();
  ASSERT_FALSE(outcome->rounds.empty());
  const RoundRecord& last = outcome->rounds.back();
  EXPECT_FALSE(last.deadline_met);
  EXPECT_TRUE(last.all_correct);  // the answer was right: only its time failed it
  EXPECT_GT(last.elapsed_us, profile.round_deadline_us);
}

// The barrier wait itself: three members as fibers on one loop arrive at barrier 1 one after the
// other; none returns before the last arrived (with a blocking wait the first would never return
// and the others never arrive), and each then arrives at barrier 3 and learns who failed.
TEST(SessionLoopsTest, BarrierWaitsOnALoopOpenOnlyOnceEveryMemberArrived) {
  Watchdog watchdog(kRunLimit);
  WaveSync wave({"a", "b", "c"});
  std::atomic<int> arrived{0};
  std::atomic<int> passed_ready_early{0};
  std::vector<std::vector<std::string>> not_held(3);
  RunOnSessionLoops(
      3, 1,
      [&](size_t i, kj::AsyncIoContext& io, kj::WaitScope& fiber_scope) {
        LoopBarrierWait barrier(wave, fiber_scope, io.provider->getTimer());
        const std::string member(1, static_cast<char>('a' + i));
        // Each arrives a little later than the one before, on the loop's timer.
        io.provider->getTimer().afterDelay(i * 20 * kj::MILLISECONDS).wait(fiber_scope);
        arrived.fetch_add(1);
        wave.ArriveReady(member, /*ok=*/i != 2, &barrier);
        if (arrived.load() < 3) passed_ready_early.fetch_add(1);
        not_held[i] = wave.ArriveReleasing(member, /*held=*/i != 2, &barrier);
      },
      {}, nullptr);
  EXPECT_EQ(arrived.load(), 3);
  EXPECT_EQ(passed_ready_early.load(), 0);
  EXPECT_EQ(not_held[0], std::vector<std::string>{"c"});
  EXPECT_EQ(not_held[1], std::vector<std::string>{"c"});
  EXPECT_TRUE(not_held[2].empty());
  EXPECT_TRUE(wave.WaveDone());
}

// A member that can no longer wait (its loop is going away) arrives without waiting: it returns at
// once, and the others' barriers open with it counted as not held.
TEST(SessionLoopsTest, AMemberThatCanOnlyArriveHoldsNoOneUp) {
  Watchdog watchdog(kRunLimit);
  WaveSync wave({"a", "b"});
  WaveSync::ArriveOnlyWait arrive_only;
  wave.Leave("b", &arrive_only);  // returns although "a" has not arrived
  wave.ArriveReady("a", true);    // a thread of its own: blocks only if "b" were not counted
  EXPECT_EQ(wave.ArriveReleasing("a", true), std::vector<std::string>{"b"});
}

// A loop that cannot start its fibers (here: a stack no machine can give) runs none of its sessions
// and reports each as not run, so its caller can make them leave their wave; none is half-run.
TEST(SessionLoopsTest, ALoopThatCannotStartReportsEverySessionAsNotRun) {
  Watchdog watchdog(kRunLimit);
  std::atomic<int> ran{0};
  std::mutex mu;
  std::vector<size_t> not_run;
  std::string why;
  RunOnSessionLoops(
      3, 1, [&](size_t, kj::AsyncIoContext&, kj::WaitScope&) { ran.fetch_add(1); },
      [&](size_t index, const std::string& error) {
        std::lock_guard<std::mutex> lock(mu);
        not_run.push_back(index);
        why = error;
      },
      nullptr, /*fiber_stack_bytes=*/size_t{1} << 62);
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(not_run, (std::vector<size_t>{0, 1, 2}));
  EXPECT_FALSE(why.empty());
}

// Members on loops and members on threads of their own wait at the same barriers together.
TEST(SessionLoopsTest, MembersOnALoopAndOnThreadsShareTheBarriers) {
  Watchdog watchdog(kRunLimit);
  WaveSync wave({"loop-a", "loop-b", "thread-c"});
  std::atomic<int> released{0};
  std::thread own([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    wave.ArriveReady("thread-c", true);
    wave.ArriveReleasing("thread-c", true);
    released.fetch_add(1);
  });
  RunOnSessionLoops(
      2, 1,
      [&](size_t i, kj::AsyncIoContext& io, kj::WaitScope& fiber_scope) {
        LoopBarrierWait barrier(wave, fiber_scope, io.provider->getTimer());
        const std::string member = i == 0 ? "loop-a" : "loop-b";
        wave.ArriveReady(member, true, &barrier);
        EXPECT_TRUE(wave.ArriveReleasing(member, true, &barrier).empty());
        released.fetch_add(1);
      },
      {}, nullptr);
  own.join();
  EXPECT_EQ(released.load(), 3);
}

}  // namespace
}  // namespace wipeproof

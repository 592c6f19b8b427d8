// The agent's event loop during rounds (prover/agent/round_polling.h): it polls only while a
// session answers rounds, stops as soon as that session ends (abort, disconnect, finish) and after
// max_poll_us of one session, and never polls when disabled.
#include "prover/agent/round_polling.h"

#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

constexpr ConnectionId kOwner = 1;
const PeerKeyId kAsChallenger = proto::KeyIdOf(agent_test::ChallengerKey().public_key);

// True once `condition` holds, polling every millisecond for at most 10 s.
bool Eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 10000; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return condition();
}

// RunAgentEventLoop on its own thread over `core`, until destroyed.
class LoopThread {
 public:
  LoopThread(const AgentCore& core, const RoundPollingOptions& options)
      : thread_([this, &core, options] {
          kj::AsyncIoContext io = kj::setupAsyncIo();
          RunAgentEventLoop(StopWhenAsked(io.provider->getTimer()), io.waitScope, io.provider->getTimer(), core,
                            options, &stats_);
          returned_.store(true);
        }) {}
  ~LoopThread() {
    stop_.store(true);
    thread_.join();
  }
  const RoundPollingStats& stats() const { return stats_; }
  bool returned() const { return returned_.load(); }

 private:
  kj::Promise<void> StopWhenAsked(kj::Timer& timer) {
    if (stop_.load()) return kj::READY_NOW;
    return timer.afterDelay(kj::MILLISECONDS).then([this, &timer]() { return StopWhenAsked(timer); });
  }

  RoundPollingStats stats_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> returned_{false};
  std::thread thread_;
};

agent_test::OrderSpec OrderNumber(uint8_t n) {
  agent_test::OrderSpec spec;
  spec.session_id = agent_test::SessionIdOf(n);
  return spec;
}

TEST(RoundPollingTest, PollsOnlyWhileASessionAnswersRoundsAndStopsWhenItEnds) {
  AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(), SystemClock());
  RoundPollingOptions options;
  options.session_tick_us = 1000;
  options.idle_tick_us = 1000;
  LoopThread loop(core, options);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(loop.stats().polling.load()) << "polling with no session";
  EXPECT_EQ(loop.stats().poll_periods.load(), 0u);

  // Filled (its device has its notice): polled until aborted.
  agent_test::OrderSpec first = OrderNumber(1);
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(first, SystemClock()), kOwner, kAsChallenger).ok());
  EXPECT_FALSE(core.AnsweringRounds().empty());
  ASSERT_TRUE(Eventually([&] { return loop.stats().polling.load(); })) << "no polling while rounds are answered";
  ASSERT_TRUE(core.Abort(kOwner, proto::AsView(first.session_id), "test").ok());
  ASSERT_TRUE(Eventually([&] { return !loop.stats().polling.load(); })) << "polling outlived an aborted session";
  EXPECT_EQ(loop.stats().poll_periods.load(), 1u);

  // Ended by a disconnect.
  agent_test::OrderSpec second = OrderNumber(2);
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(second, SystemClock()), kOwner, kAsChallenger).ok());
  ASSERT_TRUE(Eventually([&] { return loop.stats().polling.load(); }));
  core.OnDisconnect(kOwner);
  ASSERT_TRUE(Eventually([&] { return !loop.stats().polling.load(); })) << "polling outlived a disconnected session";

  // Ended by its finish.
  agent_test::OrderSpec third = OrderNumber(3);
  const proto::SignedEnvelope order = agent_test::SignedOrder(third, SystemClock());
  ASSERT_TRUE(core.StartSession(order, kOwner, kAsChallenger).ok());
  ASSERT_TRUE(Eventually([&] { return loop.stats().polling.load(); }));
  ASSERT_TRUE(core.Finish(kOwner, agent_test::SignedVerdict(order, true)).ok());
  ASSERT_TRUE(Eventually([&] { return !loop.stats().polling.load(); })) << "polling outlived a finished session";
  EXPECT_EQ(loop.stats().poll_periods.load(), 3u);
  EXPECT_EQ(loop.stats().capped.load(), 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loop.stats().poll_periods.load(), 3u) << "polling restarted with no session";
}

TEST(RoundPollingTest, StopsAfterMaxPollUsOfOneSessionAndNotAgainForIt) {
  AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(), SystemClock());
  RoundPollingOptions options;
  options.max_poll_us = 200'000;
  options.session_tick_us = 1000;
  LoopThread loop(core, options);
  agent_test::OrderSpec spec = OrderNumber(1);
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(spec, SystemClock()), kOwner, kAsChallenger).ok());
  ASSERT_TRUE(Eventually([&] { return loop.stats().capped.load() == 1; })) << "polling never stopped";
  EXPECT_GE(std::chrono::steady_clock::now() - started, std::chrono::microseconds(options.max_poll_us));
  EXPECT_FALSE(loop.stats().polling.load());
  // The session still answers rounds, and is not polled again.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(core.AnsweringRounds().empty());
  EXPECT_FALSE(loop.stats().polling.load());
  EXPECT_EQ(loop.stats().poll_periods.load(), 1u);
  EXPECT_GE(loop.stats().polled_us.load(), static_cast<uint64_t>(options.max_poll_us));
  // A new session is polled again.
  ASSERT_TRUE(core.Abort(kOwner, proto::AsView(spec.session_id), "test").ok());
  agent_test::OrderSpec next = OrderNumber(2);
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(next, SystemClock()), kOwner, kAsChallenger).ok());
  ASSERT_TRUE(Eventually([&] { return loop.stats().poll_periods.load() == 2; }));
  ASSERT_TRUE(core.Abort(kOwner, proto::AsView(next.session_id), "test").ok());
}

// A session whose holding rounds used up the budget is polled again, with a budget of its own,
// once its proof rounds begin (its first proof-shaped round: every device with its full q).
TEST(RoundPollingTest, ProofRoundsGetABudgetOfTheirOwn) {
  AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(), SystemClock());
  RoundPollingOptions options;
  options.max_poll_us = 100'000;
  options.session_tick_us = 1000;
  LoopThread loop(core, options);
  agent_test::OrderSpec spec = OrderNumber(1);  // one host device, q = 8
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(spec, SystemClock()), kOwner, kAsChallenger).ok());
  auto answer = [&](uint32_t index, unsigned labels) {
    std::vector<uint64_t> indices;
    for (unsigned k = 0; k < labels; ++k) indices.push_back(k * 256 + index);
    agent_test::Round round;
    auto request = round.Build(spec.session_id, index, {{0, indices}});
    return core.AnswerRound(kOwner, request.asReader(), round.response.initRoot<proto::RoundAnswer>());
  };
  ASSERT_TRUE(answer(0, 1).ok());  // a holding round (fewer than q labels)
  ASSERT_TRUE(Eventually([&] { return loop.stats().capped.load() == 1; })) << "holding-round polling never stopped";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(loop.stats().poll_periods.load(), 1u);
  EXPECT_NE(core.AnsweringRounds().find("(holding rounds)"), std::string::npos) << core.AnsweringRounds();
  ASSERT_TRUE(answer(1, 8).ok());  // the first proof round
  EXPECT_NE(core.AnsweringRounds().find("(proof rounds)"), std::string::npos) << core.AnsweringRounds();
  ASSERT_TRUE(Eventually([&] { return loop.stats().poll_periods.load() == 2; })) << "proof rounds not polled";
  ASSERT_TRUE(Eventually([&] { return loop.stats().capped.load() == 2; })) << "proof-round polling never stopped";
  ASSERT_TRUE(core.Abort(kOwner, proto::AsView(spec.session_id), "test").ok());
  EXPECT_TRUE(Eventually([&] { return !loop.stats().polling.load(); }));
  EXPECT_EQ(loop.stats().poll_periods.load(), 2u);
}

TEST(RoundPollingTest, NeverPollsWhenDisabledAndReturnsWhenDone) {
  AgentCore core(agent_test::TestConfig(), agent_test::HostBackends(), SystemClock());
  RoundPollingOptions options;
  options.enabled = false;
  options.session_tick_us = 1000;
  {
    LoopThread loop(core, options);
    agent_test::OrderSpec spec = OrderNumber(1);
    ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(spec, SystemClock()), kOwner, kAsChallenger).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_EQ(loop.stats().poll_periods.load(), 0u);
    ASSERT_TRUE(core.Abort(kOwner, proto::AsView(spec.session_id), "test").ok());
  }
  // And with polling on, the loop returns when its promise resolves even in the middle of polling.
  options.enabled = true;
  agent_test::OrderSpec spec = OrderNumber(2);
  ASSERT_TRUE(core.StartSession(agent_test::SignedOrder(spec, SystemClock()), kOwner, kAsChallenger).ok());
  {
    LoopThread loop(core, options);
    ASSERT_TRUE(Eventually([&] { return loop.stats().polling.load(); }));
  }  // joined: the loop returned while the session still answers rounds
  EXPECT_FALSE(core.AnsweringRounds().empty());
  ASSERT_TRUE(core.Abort(kOwner, proto::AsView(spec.session_id), "test").ok());
}

}  // namespace
}  // namespace wipeproof

namespace wipeproof {
namespace {

TEST(SpareCoreModeTest, AutoPollsOnlyWithEnoughHardwareThreads) {
  SpareCoreMode mode;
  ASSERT_TRUE(SpareCoreModeFromName("auto", &mode));
  EXPECT_EQ(mode, SpareCoreMode::kAuto);
  EXPECT_FALSE(SpareCoreEnabled(mode, 2));  // the reference VM: polling raised its p99.9
  EXPECT_FALSE(SpareCoreEnabled(mode, kSpareCoreMinThreads - 1));
  EXPECT_TRUE(SpareCoreEnabled(mode, kSpareCoreMinThreads));
  EXPECT_TRUE(SpareCoreEnabled(mode, 192));  // a GPU node
  ASSERT_TRUE(SpareCoreModeFromName("on", &mode));
  EXPECT_TRUE(SpareCoreEnabled(mode, 2));
  ASSERT_TRUE(SpareCoreModeFromName("off", &mode));
  EXPECT_FALSE(SpareCoreEnabled(mode, 192));
  EXPECT_FALSE(SpareCoreModeFromName("true", &mode));
  EXPECT_FALSE(SpareCoreModeFromName("", &mode));
}

// `auto` counts the hardware threads the process may run on (its affinity: taskset, a pod's CPU
// set), not the machine's: a thread confined to one CPU sees one.
TEST(SpareCoreTest, UsableThreadsFollowTheAffinity) {
  cpu_set_t all;
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(UsableHardwareThreads(), static_cast<unsigned>(CPU_COUNT(&all)));
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c) {
    if (CPU_ISSET(c, &all)) first = c;
  }
  ASSERT_GE(first, 0);
  unsigned confined = 0;
  std::thread([&] {  // affinity is per thread: this one is confined, the test's is not
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (sched_setaffinity(0, sizeof(one), &one) == 0) confined = UsableHardwareThreads();
  })
      .join();
  EXPECT_EQ(confined, 1u);
  SpareCoreMode mode = SpareCoreMode::kAuto;
  EXPECT_FALSE(SpareCoreEnabled(mode, confined));
}

}  // namespace
}  // namespace wipeproof

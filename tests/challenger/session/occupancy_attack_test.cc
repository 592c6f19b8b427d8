// TEMPORARY (attack review of occupancy windows; the owner may keep or remove it).
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/session/occupancy_bound.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/session_runner.h"
#include "challenger/session/verdict.h"
#include "proto/codec.h"
#include "proto/session_rules.h"
#include "proto/signing.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using testing::Deviation;
using testing::DeviationKind;

constexpr char kSlowClasses[] = R"({"classes": [{"name": "test-slow", "t_min_ps": 3125000000, "safety_factor": 1.5}]})";

Profile SlowCalibratedProfile() {
  Profile p = testing::TestProfile();
  p.name = "test-slow-calibrated";
  p.calibrated = true;
  p.adversary = {"test-slow", 3'125'000'000, 1.5};
  p.round_deadline_us = 200'000;
  p.honest_round_p999_us = 100'000;
  return testing::Endorsed(p, testing::TestKey(0x11), kSlowClasses);
}

class OccupancyAttackTest : public ::testing::Test {
 protected:
  OccupancyAttackTest() : io_(kj::setupAsyncIo()) {}
  ~OccupancyAttackTest() noexcept override {}
  SessionPlan Plan(const OccupancyRequest& request) {
    auto plan = BuildPlan(inventory_, "node-a", SlowCalibratedProfile(), LoneSessionWaveContext(inventory_, "node-a"),
                          SystemClock());
    EXPECT_TRUE(plan.ok());
    Status set = SetOccupancySchedule(&*plan, request);
    EXPECT_TRUE(set.ok()) << set.ToString();
    return *plan;
  }
  SessionOutcome Run(const SessionPlan& plan, Deviation deviation = {}) {
    auto agent = testing::TestAgent(std::move(deviation), nullptr, nullptr, testing::TestKey(0x33),
                                    authority_.public_key, challenger_.public_key);
    testing::PipeConnector pipe(io_, kj::mv(agent));
    SessionEnv env;
    env.clock = &SystemClock();
    env.timer = &io_.provider->getTimer();
    env.wait_scope = &io_.waitScope;
    env.records = &sink_;
    env.threads = 2;
    SessionRunner runner(plan, SessionKeys{authority_, challenger_}, env);
    auto outcome = runner.Run(pipe);
    EXPECT_TRUE(outcome.ok());
    return std::move(outcome).value();
  }
  uint64_t Planned() {
    SessionPlan p = Plan({1, 1, 0, 1});
    uint64_t planned = 0;
    for (const PlannedDevice& d : p.devices) planned += d.planned_bytes();
    return planned;
  }
  kj::AsyncIoContext io_;
  const proto::KeyPair authority_ = testing::TestKey(0x11);
  const proto::KeyPair challenger_ = testing::TestKey(0x22);
  const Inventory inventory_ = testing::TestInventory();
  testing::MemoryRecordSink sink_;
};

// An honest but slow node (it relabels every chunk before each answer: the borrower with borrow_us 1
// and nothing ever missing at a round): when the window's end falls while a round is in flight, the
// verdict's U counts only the part of that round inside the window, while both audits
// (session_audit.cc RecomputeOccupancy, audit_recipe.py check_occupancy) demand U >= every round
// sent before the end's whole elapsedUs.
TEST_F(OccupancyAttackTest, HonestVerdictFailsTheAuditsUCheckWhenTheWindowEndsMidRound) {
  int violations = 0, passes = 0;
  for (int i = 0; i < 8; ++i) {
    const SessionPlan plan = Plan({200'000, 10'000, Planned() / 4, 8});
    Deviation slow = testing::Cheat(DeviationKind::kBorrowBetweenRounds);
    slow.hidden_fraction = 1.0;
    slow.borrow_us = 1;
    SessionOutcome outcome = Run(plan, slow);
    if (!outcome.pass) { std::printf("run %d failed: %s\n", i, outcome.failure.Describe().c_str()); continue; }
    ++passes;
    auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
    ASSERT_TRUE(verdict.ok());
    auto o = verdict->root().getOccupancy();
    uint64_t in_flight = 0, last_sent = 0, last_elapsed = 0;
    for (const RoundRecord& r : outcome.rounds) {
      if (r.sent_after_order_us > o.getWindowStartAfterOrderUs() && r.sent_after_order_us < o.getWindowEndAfterOrderUs()) {
        in_flight += r.elapsed_us;
        last_sent = r.sent_after_order_us;
        last_elapsed = r.elapsed_us;
      }
    }
    const bool bad = o.getUnprotectedUs() < in_flight;
    violations += bad;
    std::printf("run %d: K=%u start=%lu end=%lu U=%lu in_flight(audit)=%lu last round sent %lu answered %lu%s\n", i,
                o.getRounds(), (unsigned long)o.getWindowStartAfterOrderUs(), (unsigned long)o.getWindowEndAfterOrderUs(),
                (unsigned long)o.getUnprotectedUs(), (unsigned long)in_flight, (unsigned long)last_sent,
                (unsigned long)(last_sent + last_elapsed), bad ? "  <-- audits reject this honest verdict" : "");
  }
  EXPECT_EQ(violations, 0) << "of " << passes << " passing sessions";
}

// A window the order check, SetOccupancySchedule and the pool accept whose verdict cannot be signed:
// 32 bytes of RoundTiming per round, over the 8 MiB envelope limit.
TEST_F(OccupancyAttackTest, AcceptedWindowWhoseVerdictIsTooLargeToSign) {
  SessionPlan plan = Plan({1, 1, 0, 1});
  const OccupancyRequest request{uint64_t{3} * 86'400'000'000, 1'000'000, Planned() / 4, 2};
  ASSERT_TRUE(SetOccupancySchedule(&plan, request).ok());
  std::vector<RoundRecord> rounds(plan.occupancy_batches + plan.profile.rounds);
  for (size_t i = 0; i < rounds.size(); ++i) {
    rounds[i].round = static_cast<uint32_t>(i);
    rounds[i].elapsed_us = 1000;
    rounds[i].sent_after_order_us = 1'000'000'000 + i;
  }
  capnp::MallocMessageBuilder message;
  auto list = message.initRoot<proto::Verdict>().initRounds(static_cast<unsigned>(rounds.size()));
  WriteRoundTimings(rounds, list);
  const size_t bytes = capnp::computeSerializedSizeInWords(message) * 8;
  std::printf("pool %u rounds: the verdict's rounds alone take %zu bytes; envelope limit %zu\n", plan.occupancy_batches,
              bytes, proto::kMaxEnvelopeBytes);
  EXPECT_LT(bytes, proto::kMaxEnvelopeBytes);
}

// The same over TCP (the agent on its own thread, as a remote node): the window closes on time while
// the slow round is still in flight.
TEST(OccupancyAttackTcpTest, HonestVerdictFailsTheAuditsUCheckWhenTheWindowEndsMidRoundTcp) {
  Deviation slow = testing::Cheat(DeviationKind::kBorrowBetweenRounds);
  slow.hidden_fraction = 1.0;
  slow.borrow_us = 1;
  auto a = testing::ServeTestAgent(testing::TestKey(0x33), slow);
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  const Inventory inventory = testing::TestInventoryAt(*a, *b);
  int violations = 0, passes = 0;
  for (int i = 0; i < 6; ++i) {
    auto plan = BuildPlan(inventory, "node-a", SlowCalibratedProfile(), LoneSessionWaveContext(inventory, "node-a"),
                          SystemClock());
    ASSERT_TRUE(plan.ok());
    uint64_t planned = 0;
    for (const PlannedDevice& d : plan->devices) planned += d.planned_bytes();
    ASSERT_TRUE(SetOccupancySchedule(&*plan, {200'000, 10'000, planned / 4, 8}).ok());
    testing::MemoryRecordSink sink;
    auto outcome = RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr,
                                 testing::TcpTestOptions());
    ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
    if (!outcome->pass) { std::printf("run %d failed: %s\n", i, outcome->failure.Describe().c_str()); continue; }
    ++passes;
    auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome->verdict, testing::TestKey(0x22).public_key);
    ASSERT_TRUE(verdict.ok());
    auto o = verdict->root().getOccupancy();
    uint64_t in_flight = 0, last_sent = 0, last_elapsed = 0;
    for (const RoundRecord& r : outcome->rounds) {
      if (r.sent_after_order_us > o.getWindowStartAfterOrderUs() && r.sent_after_order_us < o.getWindowEndAfterOrderUs()) {
        in_flight += r.elapsed_us;
        last_sent = r.sent_after_order_us;
        last_elapsed = r.elapsed_us;
      }
    }
    const bool bad = o.getUnprotectedUs() < in_flight;
    violations += bad;
    std::printf("tcp run %d: K=%u start=%lu end=%lu U=%lu in_flight(audit)=%lu last round sent %lu answered %lu%s\n", i,
                o.getRounds(), (unsigned long)o.getWindowStartAfterOrderUs(), (unsigned long)o.getWindowEndAfterOrderUs(),
                (unsigned long)o.getUnprotectedUs(), (unsigned long)in_flight, (unsigned long)last_sent,
                (unsigned long)(last_sent + last_elapsed), bad ? "  <-- audits reject this honest verdict" : "");
  }
  EXPECT_EQ(violations, 0) << "of " << passes << " passing sessions";
}

}  // namespace
}  // namespace wipeproof

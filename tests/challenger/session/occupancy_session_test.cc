// Occupancy windows in whole sessions (challenger/session/occupancy_bound.h, session_runner.h): the
// challenger against the test agent over an in-memory pipe, on the system clock, under a profile
// whose class is slow enough (t_min 3.125 ms, round deadline 200 ms) that real rounds meet the
// deadline rule. An honest node holds its labels through the window and the verdict states for how
// long at most its memory was short; a node that frees memory after its proof rounds is caught in
// an occupancy round; an order's window the agent cannot keep is refused before anything is filled.
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "challenger/fleet/plan_builder.h"
#include "challenger/session/occupancy_bound.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/session_runner.h"
#include "proto/codec.h"
#include "proto/session_rules.h"
#include "proto/signing.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using proto::FailureReason;
using testing::Deviation;
using testing::DeviationKind;

constexpr char kSlowClasses[] = R"({"classes": [{"name": "test-slow", "t_min_ps": 3125000000, "safety_factor": 1.5}]})";

// TestProfile, calibrated under class test-slow: floor 1.5 * 64 * 3.125 ms / 1.5 = 200 ms.
Profile SlowCalibratedProfile() {
  Profile p = testing::TestProfile();
  p.name = "test-slow-calibrated";
  p.calibrated = true;
  p.adversary = {"test-slow", 3'125'000'000, 1.5};
  p.round_deadline_us = 200'000;
  p.honest_round_p999_us = 100'000;
  return testing::Endorsed(p, testing::TestKey(0x11), kSlowClasses);
}

class OccupancySessionTest : public ::testing::Test {
 protected:
  OccupancySessionTest() : io_(kj::setupAsyncIo()) {}
  ~OccupancySessionTest() noexcept override {}

  SessionPlan Plan(const OccupancyRequest& request) {
    auto plan = BuildPlan(inventory_, "node-a", SlowCalibratedProfile(), LoneSessionWaveContext(inventory_, "node-a"),
                          SystemClock());
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
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
    EXPECT_TRUE(outcome.ok()) << outcome.status().ToString();
    return std::move(outcome).value();
  }

  static uint64_t PlannedBytes(const SessionPlan& plan) {
    uint64_t planned = 0;
    for (const PlannedDevice& d : plan.devices) planned += d.planned_bytes();
    return planned;
  }
  // node-a's planned bytes (host 64 chunks + GPU-test-0 96 chunks of 64 labels).
  uint64_t NodePlannedBytes() {
    auto plan = BuildPlan(inventory_, "node-a", SlowCalibratedProfile(), LoneSessionWaveContext(inventory_, "node-a"),
                          SystemClock());
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? PlannedBytes(*plan) : 0;
  }
  // The passing session's verdict, verified under the challenger key.
  proto::Parsed<proto::Verdict> PassingVerdict(const SessionOutcome& outcome) {
    EXPECT_TRUE(outcome.pass) << outcome.failure.Describe();
    auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
    EXPECT_TRUE(verdict.ok()) << verdict.status().ToString();
    return std::move(verdict).value();
  }

  kj::AsyncIoContext io_;
  const proto::KeyPair authority_ = testing::TestKey(0x11);
  const proto::KeyPair challenger_ = testing::TestKey(0x22);
  const Inventory inventory_ = testing::TestInventory();
  testing::MemoryRecordSink sink_;
};

TEST_F(OccupancySessionTest, ScheduleSpreadsLabelsByBytesAndGrowsTheTimeout) {
  auto plan = BuildPlan(inventory_, "node-a", SlowCalibratedProfile(), LoneSessionWaveContext(inventory_, "node-a"),
                        SystemClock());
  ASSERT_TRUE(plan.ok());
  const uint64_t timeout_before = plan->session_timeout_us;
  ASSERT_TRUE(SetOccupancySchedule(&*plan, {60'000'000, 1'000'000, 1000, 5}).ok());
  // host 64 chunks, GPU-test-0 96 chunks: 5 labels by bytes are 2 and 3.
  EXPECT_EQ(plan->devices[0].occupancy_labels, 2u);
  EXPECT_EQ(plan->devices[1].occupancy_labels, 3u);
  EXPECT_EQ(plan->occupancy_batches, OccupancyPoolRounds(60'000'000, 1'000'000));
  EXPECT_EQ(plan->occupancy_batches, static_cast<uint32_t>(std::ceil(60 + 8 * std::sqrt(60.0) + 16)));
  // The timeout covers the window and one more round wait, whatever R' it hides (R' in [16, 32]:
  // the two draws differ by at most 2 x 16 round waits of 1.4 s).
  EXPECT_GT(plan->session_timeout_us, timeout_before + 60'000'000 + 1'400'000 - 2 * uint64_t{16} * 1'400'000);
  EXPECT_LT(plan->session_timeout_us, timeout_before + 60'000'000 + 1'400'000 + 2 * uint64_t{16} * 1'400'000);
  // A request equal to q moves off it (a proof round's shape), and bad requests are refused.
  SessionPlan q = *plan;
  ASSERT_TRUE(SetOccupancySchedule(&q, {60'000'000, 1'000'000, 1000, 80}).ok());
  EXPECT_NE(q.devices[0].occupancy_labels, q.devices[0].labels_per_round);
  EXPECT_NE(q.devices[1].occupancy_labels, q.devices[1].labels_per_round);
  SessionPlan bad = *plan;
  EXPECT_FALSE(SetOccupancySchedule(&bad, {60'000'000, 0, 1000, 5}).ok());             // no gap
  EXPECT_FALSE(SetOccupancySchedule(&bad, {60'000'000, 61'000'000, 1000, 5}).ok());    // gap above the window
  EXPECT_FALSE(SetOccupancySchedule(&bad, {60'000'000, 1'000'000, 1000, 0}).ok());     // no labels
  EXPECT_FALSE(SetOccupancySchedule(&bad, {60'000'000, 1'000'000, PlannedBytes(bad), 5}).ok());  // b = all
  EXPECT_FALSE(SetOccupancySchedule(&bad, {uint64_t{30} * 86'400'000'000, 1, 1000, 5}).ok());    // pool too big
  EXPECT_FALSE(SetOccupancySchedule(&bad, {uint64_t{3} * 86'400'000'000, 1'000'000, 1000, 5}).ok());  // 3 days at 1 s
  // The order carries the window, and reads back.
  auto order = SignOrder(*plan, SessionKeys{authority_, challenger_});
  ASSERT_TRUE(order.ok()) << order.status().ToString();
  auto parsed = proto::ParseMessage<proto::WipeOrder>(proto::AsView(order->payload));
  ASSERT_TRUE(parsed.ok());
  const SessionPlan back = PlanFromOrder(parsed->root());
  EXPECT_EQ(back.occupancy_window_us, 60'000'000u);
  EXPECT_EQ(back.occupancy_mean_gap_us, 1'000'000u);
  EXPECT_EQ(back.occupancy_shortfall_bytes, 1000u);
  EXPECT_EQ(back.devices[1].occupancy_labels, 3u);
}

TEST_F(OccupancySessionTest, HonestNodeHoldsThroughTheWindowAndTheVerdictStatesIt) {
  const SessionPlan plan = Plan({600'000, 15'000, NodePlannedBytes() / 4, 8});
  SessionOutcome outcome = Run(plan);
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto verdict = PassingVerdict(outcome);
  proto::Verdict::Reader v = verdict.root();
  ASSERT_TRUE(v.getBoundStated()) << v.getStatement().cStr();
  ASSERT_TRUE(v.hasOccupancy());
  auto o = v.getOccupancy();
  auto order = proto::ParseMessage<proto::WipeOrder>(proto::AsView(outcome.order.payload));
  ASSERT_TRUE(order.ok());
  // The window opens at the last proof round's answer and lasts at least its length; the rounds
  // sent inside it are occupancy rounds, every one counted.
  uint64_t last_proof_answer = 0;
  uint32_t inside = 0;
  for (size_t i = 0; i < outcome.rounds.size(); ++i) {
    auto round = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(outcome.exchanges[i].round));
    ASSERT_TRUE(round.ok());
    const RoundRecord& r = outcome.rounds[i];
    if (proto::IsProofRound(order->root(), round->root())) last_proof_answer = r.sent_after_order_us + r.elapsed_us;
    if (r.sent_after_order_us >= o.getWindowStartAfterOrderUs() && r.sent_after_order_us < o.getWindowEndAfterOrderUs()) {
      EXPECT_TRUE(proto::IsOccupancyRound(order->root(), round->root())) << "round " << i;
      ++inside;
    }
  }
  EXPECT_EQ(o.getWindowStartAfterOrderUs(), last_proof_answer);
  EXPECT_GE(o.getWindowEndAfterOrderUs() - o.getWindowStartAfterOrderUs(), 600'000u);
  EXPECT_EQ(o.getRounds(), inside);
  // About 40 rounds at a mean gap of 15 ms; none at all has a chance of e^-40.
  EXPECT_GE(o.getRounds(), 1u);
  // The statement's figures, recomputed: b a quarter of the planned bytes, 8 labels (3 + 5 by bytes).
  std::vector<OccupancyDevice> devices;
  for (const PlannedDevice& d : plan.devices) devices.push_back({d.planned_bytes(), d.occupancy_labels});
  const uint64_t length = o.getWindowEndAfterOrderUs() - o.getWindowStartAfterOrderUs();
  const OccupancyStatement want =
      ComputeOccupancyStatement(devices, plan.occupancy_shortfall_bytes, 0.99, 15'000, o.getUnprotectedUs(), length);
  EXPECT_DOUBLE_EQ(o.getDetection(), want.detection);
  // 3 + 5 labels by bytes, a little off the pooled 1 - (3/4)^8 (ratios 43690 and 39321 bytes per label).
  EXPECT_LT(o.getDetection(), 1 - std::pow(0.75, 8));
  EXPECT_GT(o.getDetection(), 0.89);
  EXPECT_EQ(o.getShortUs(), want.stated_short_us);
  EXPECT_EQ(o.getStated(), want.says_something);
  // U holds at least every occupancy round's time in flight inside the window, and no more than it.
  uint64_t in_flight = 0;
  for (const RoundRecord& r : outcome.rounds) {
    if (r.sent_after_order_us >= o.getWindowStartAfterOrderUs() && r.sent_after_order_us < o.getWindowEndAfterOrderUs())
      in_flight += std::min(r.elapsed_us, o.getWindowEndAfterOrderUs() - r.sent_after_order_us);
  }
  EXPECT_GE(o.getUnprotectedUs(), in_flight);
  EXPECT_LE(o.getUnprotectedUs(), length);
  const std::string statement = o.getStatement().cStr();
  if (o.getStated()) {
    EXPECT_EQ(statement.rfind("at 99% confidence node node-a's planned memory lacked labels in more than ", 0), 0u)
        << statement;
  } else {
    // Only a machine so loaded that the unprotected time fills most of the window says nothing.
    EXPECT_NE(statement.find("is not below the window's"), std::string::npos) << statement;
  }
}

TEST_F(OccupancySessionTest, TooFewRoundsForTheWindowStateNothingAndSayWhy) {
  // A mean gap of 0.5 s over 0.6 s: T* = 0.5 s * ln 100 / d(b) > 2.3 s, above the window whatever
  // the rounds did.
  const SessionPlan plan = Plan({600'000, 500'000, NodePlannedBytes() / 2, 8});
  SessionOutcome outcome = Run(plan);
  ASSERT_TRUE(outcome.pass) << outcome.failure.Describe();
  auto o = PassingVerdict(outcome).root().getOccupancy();
  EXPECT_FALSE(o.getStated());
  EXPECT_GT(o.getShortUs(), 2'300'000u);
  const std::string statement = o.getStatement().cStr();
  EXPECT_EQ(statement.rfind("no occupancy statement: T* + U = ", 0), 0u) << statement;
  EXPECT_NE(statement.find("shorten the mean gap or ask more labels per round"), std::string::npos) << statement;
}

// threat-model: T-OCCUPANCY-BORROW
TEST_F(OccupancySessionTest, NodeThatFreesMemoryAfterItsProofRoundsIsCaught) {
  // Drops half of every device's chunks right after its first occupancy round, for good: each later
  // round finds 8 labels missing with chance 1 - 2^-8 each, over about 40 rounds.
  const SessionPlan plan = Plan({600'000, 15'000, NodePlannedBytes() / 4, 8});
  Deviation borrow = testing::Cheat(DeviationKind::kBorrowBetweenRounds);
  borrow.hidden_fraction = 0.5;
  borrow.borrow_us = 0;
  SessionOutcome outcome = Run(plan, borrow);
  ASSERT_FALSE(outcome.pass);
  EXPECT_EQ(outcome.failure.reason, FailureReason::WRONG_LABEL) << outcome.failure.Describe();
  auto verdict = proto::VerifyAndParse<proto::Verdict>(outcome.verdict, challenger_.public_key);
  ASSERT_TRUE(verdict.ok());
  // The window ran (the proof rounds passed) and ended at the failure; it states nothing.
  ASSERT_TRUE(verdict->root().hasOccupancy());
  EXPECT_FALSE(verdict->root().getOccupancy().getStated());
  EXPECT_EQ(std::string(verdict->root().getOccupancy().getStatement().cStr()),
            "no occupancy statement: session failed (wrongLabel)");
}

}  // namespace
}  // namespace wipeproof

// The wave shell game (issue 11 §2, threat-model "A wave is challenged together"): a node that has
// answered the rounds it expects drops its labels to take a neighbour's checkpoint while the
// neighbour, still filling, relabels the memory it freed. Rounds are never disclosed, and the proof
// rounds (q_d labels per device, the only rounds the bound counts) go to every member only once
// every member has reported its fill: before that a filled node gets holding rounds (q_d / 8). A node
// that drops a fraction f of its chunks before its neighbour's fill therefore meets all R proof
// rounds over dropped memory, and passes them with probability (1 - f)^(R * q * D). Over real
// loopback TCP and TLS, with the system clock.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>

#include "adversary/relay_agent.h"
#include "challenger/fleet/wave_run.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using testing::Deviation;
using testing::DeviationKind;

constexpr uint32_t kProofRounds = 8;
constexpr double kDropped = 0.9;  // of each device's chunks, after the proof rounds

Profile ShellGameProfile() {
  Profile p = testing::TestProfile();
  p.rounds = kProofRounds;
  p.round_deadline_us = 500'000;  // loopback on a shared machine: generous
  return p;
}

adversary::RelayDelays SlowFill() {
  adversary::RelayDelays delays;
  delays.fill_us = 300'000;
  return delays;
}

// node-b: honest, its fill 300 ms late by default (still filling while node-a has filled).
std::unique_ptr<adversary::LoopbackAgentServer> ServeSlowNeighbour(adversary::RelayDelays delays = SlowFill()) {
  return std::make_unique<adversary::LoopbackAgentServer>(
      [delays](kj::Timer& timer) -> kj::Own<proto::ProverAgent::Server> {
        return kj::heap<adversary::RelayAgent>(
            proto::ProverAgent::Client(testing::TestAgent({}, nullptr, nullptr, testing::TestKey(0x44))), delays,
            &timer);
      },
      testing::TestKey(0x44), testing::TestCertificate(0x22));
}

struct WaveRun {
  SessionOutcome a, b;
  bool wave_pass = false;
};

WaveRun RunOnce(const Deviation& a_deviation, adversary::RelayDelays b_delays = SlowFill()) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33), a_deviation);
  auto b = ServeSlowNeighbour(b_delays);
  const Inventory inventory = testing::TestInventoryAt(*a, *b);
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  std::optional<proto::SignedEnvelope> wave_verdict;
  auto results = RunWave(inventory, inventory.waves[0], ShellGameProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options, &wave_verdict);
  WaveRun run;
  EXPECT_EQ(results.size(), 2u);
  if (results.size() != 2 || !results[0].outcome.ok() || !results[1].outcome.ok()) {
    ADD_FAILURE() << "a wave member had no session";
    return run;
  }
  run.a = *results[0].outcome;
  run.b = *results[1].outcome;
  if (wave_verdict) {
    auto parsed = proto::VerifyAndParse<proto::WaveVerdict>(*wave_verdict, testing::TestKey(0x22).public_key);
    run.wave_pass = parsed.ok() && parsed->root().getPass();
  }
  return run;
}

TEST(WaveShellGameTest, TheHonestSlowWavePassesAndProvesOnlyAfterTheLastFill) {
  for (int i = 0; i < 3; ++i) {
    WaveRun run = RunOnce({});
    EXPECT_TRUE(run.a.pass) << run.a.failure.Describe();
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_TRUE(run.wave_pass);
    // node-a filled first: it was probed by holding rounds while node-b filled, and its proof rounds
    // (all it the bound counts) left only after node-b's fill report. Both orders left together, so
    // the two sessions' clocks start within a few milliseconds of each other.
    ASSERT_FALSE(run.a.rounds.empty());
    EXPECT_FALSE(run.a.rounds[0].proof) << "node-a's first round is the holding round of its notice";
    uint32_t proof_rounds = 0;
    for (const RoundRecord& r : run.a.rounds) {
      if (!r.proof) continue;
      ++proof_rounds;
      EXPECT_GE(r.sent_after_order_us + 50'000, run.b.fill_us)
          << "node-a's proof round " << r.round << " left before node-b reported filled";
    }
    EXPECT_EQ(proof_rounds, kProofRounds);
  }
}

// A neighbour that reports its fill at once but sends its device's notice 300 ms later (that
// device could still hold node-a's checkpoint): node-b is not filled for the wave before that
// notice, so node-a's proof rounds wait for it.
TEST(WaveShellGameTest, ProofRoundsWaitForTheNeighboursLastNoticeNotItsReport) {
  adversary::RelayDelays late_notice;
  late_notice.notice_extra_device = 0;
  late_notice.notice_extra_us = 300'000;
  WaveRun run = RunOnce({}, late_notice);
  ASSERT_TRUE(run.a.pass) << run.a.failure.Describe();
  ASSERT_TRUE(run.b.pass) << run.b.failure.Describe();
  auto b_verdict = proto::VerifyAndParse<proto::Verdict>(run.b.verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(b_verdict.ok()) << b_verdict.status().ToString();
  ASSERT_EQ(b_verdict->root().getDevices().size(), 1u);  // node-b plans host memory only
  const uint64_t b_last_notice = b_verdict->root().getDevices()[0].getFilledAfterUs();
  EXPECT_GE(b_last_notice, 300'000u);
  EXPECT_LT(run.b.fill_us + 200'000, b_last_notice) << "node-b's report came well before its last notice";
  uint32_t proof_rounds = 0;
  for (const RoundRecord& r : run.a.rounds) {
    if (!r.proof) continue;
    ++proof_rounds;
    EXPECT_GE(r.sent_after_order_us + 50'000, b_last_notice)
        << "node-a's proof round " << r.round << " left at " << r.sent_after_order_us
        << " us, before node-b's last fill notice at " << b_last_notice << " us (report at " << run.b.fill_us << " us)";
  }
  EXPECT_EQ(proof_rounds, kProofRounds);
}

TEST(WaveShellGameTest, ANodeThatDropsItsLabelsAfterTheProofRoundsIsCaught) {
  Deviation drop = testing::Cheat(DeviationKind::kDropAfterRounds);
  drop.round = kProofRounds;  // what a v1 order disclosed as the round count
  drop.hidden_fraction = kDropped;
  constexpr int kRuns = 12;
  int caught = 0;
  for (int i = 0; i < kRuns; ++i) {
    WaveRun run = RunOnce(drop);
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_FALSE(run.wave_pass);
    if (!run.a.pass) {
      EXPECT_EQ(run.a.failure.reason, proto::FailureReason::WRONG_LABEL) << run.a.failure.Describe();
      // Caught in a round after the ones it expected.
      EXPECT_GE(run.a.failure.round, kProofRounds) << run.a.failure.Describe();
      ++caught;
    }
  }
  // Its holding rounds came first, so it drops before or during its proof rounds: at least one
  // proof round (2 x 32 labels) meets dropped memory, (1 - 0.9)^64 to pass it. Every run is caught.
  EXPECT_EQ(caught, kRuns);
}

// A small drop while the neighbour fills (5% of node-a's chunks, from its first holding round on):
// the proof rounds all come after node-b's fill, so all R = 8 of them meet it, each with q = 32
// labels on each of node-a's 2 devices: it passes with probability 0.95^512 ~ 4e-12. (Were the
// proof rounds sent at the notice, as before, a node dropping after them would meet only holding
// rounds of 2 x 4 labels while its neighbour fills.)
TEST(WaveShellGameTest, ASmallDropWhileTheNeighbourFillsIsCaughtByTheProofRounds) {
  Deviation drop = testing::Cheat(DeviationKind::kDropAfterRounds);
  drop.round = 1;  // right after the round of its fill notice
  drop.hidden_fraction = 0.05;
  const double predicted_escape = std::pow(1 - drop.hidden_fraction, kProofRounds * 32 * 2);
  ASSERT_LT(predicted_escape, 1e-10);
  constexpr int kRuns = 8;
  for (int i = 0; i < kRuns; ++i) {
    WaveRun run = RunOnce(drop);
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_FALSE(run.wave_pass);
    ASSERT_FALSE(run.a.pass) << "escaped in run " << i;
    EXPECT_EQ(run.a.failure.reason, proto::FailureReason::WRONG_LABEL) << run.a.failure.Describe();
    // Caught by a proof round, or earlier by a holding round (2 x 4 labels: passed 66% of the time).
    ASSERT_LT(run.a.failure.round, run.a.rounds.size());
  }
}

}  // namespace
}  // namespace wipeproof

// The wave shell game (issue 11 §2, threat-model "A wave is challenged together"): a node that has
// answered the rounds it expects drops its labels to take a neighbour's checkpoint while the
// neighbour, still filling, relabels the memory it freed. Rounds are never disclosed and every
// member is challenged at least once after the last member's fill report, so the dropping node
// meets at least one holding round over dropped memory: with a fraction f of its chunks dropped and
// h labels probed per device, it passes one such round with probability (1 - f)^(h * D). Over real
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

// node-b: honest, its fill 300 ms late (still filling while node-a is done with its proof rounds).
std::unique_ptr<adversary::LoopbackAgentServer> ServeSlowNeighbour() {
  return std::make_unique<adversary::LoopbackAgentServer>(
      [](kj::Timer& timer) -> kj::Own<proto::ProverAgent::Server> {
        adversary::RelayDelays delays;
        delays.fill_us = 300'000;
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

WaveRun RunOnce(const Deviation& a_deviation) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33), a_deviation);
  auto b = ServeSlowNeighbour();
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

TEST(WaveShellGameTest, TheHonestSlowWavePasses) {
  for (int i = 0; i < 3; ++i) {
    WaveRun run = RunOnce({});
    EXPECT_TRUE(run.a.pass) << run.a.failure.Describe();
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_TRUE(run.wave_pass);
  }
}

TEST(WaveShellGameTest, ANodeThatDropsItsLabelsAfterTheProofRoundsIsCaught) {
  Deviation drop = testing::Cheat(DeviationKind::kDropAfterRounds);
  drop.round = kProofRounds;  // what a v1 order disclosed as the round count
  drop.hidden_fraction = kDropped;
  // node-a's q is 32 labels per device on each of its 2 devices; a holding round probes q / 8.
  const uint32_t probed = 2 * (32 / 8);
  const double predicted_escape = std::pow(1 - kDropped, probed);  // per holding round over dropped memory
  ASSERT_LT(predicted_escape, 1e-7);
  constexpr int kRuns = 12;
  int caught = 0;
  for (int i = 0; i < kRuns; ++i) {
    WaveRun run = RunOnce(drop);
    EXPECT_TRUE(run.b.pass) << run.b.failure.Describe();
    EXPECT_FALSE(run.wave_pass);
    if (!run.a.pass) {
      EXPECT_EQ(run.a.failure.reason, proto::FailureReason::WRONG_LABEL) << run.a.failure.Describe();
      // Caught in a round after the ones it expected, while its neighbour still filled.
      EXPECT_GE(run.a.failure.round, kProofRounds) << run.a.failure.Describe();
      ++caught;
    }
  }
  // At most one escape in 10^7 rounds predicted: every run is caught.
  EXPECT_EQ(caught, kRuns);
}

}  // namespace
}  // namespace wipeproof

// The round planner (challenger/session/round_planner.h) without an event loop or an agent: which
// round is due as devices are noticed, the session closes and its wave finishes.
#include "challenger/session/round_planner.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace wipeproof {
namespace {

using Parts = std::vector<std::pair<size_t, uint32_t>>;

constexpr uint32_t kProof = 3, kHolding = 2;

struct Planner {
  std::vector<DeviceRounds> devices;
  bool closing = false, wave_done = false, gap_elapsed = false;

  explicit Planner(size_t n, bool has_holding = true) : devices(n) {
    for (DeviceRounds& d : devices) d.has_holding = has_holding;
  }
  // Plans the round due now and records it as sent.
  PlannedRound Next() {
    RoundPlanInput in;
    in.devices = &devices;
    in.proof_batches = kProof;
    in.holding_batches = kHolding;
    in.closing = closing;
    in.wave_done = wave_done;
    in.gap_elapsed = gap_elapsed;
    PlannedRound round = PlanNextRound(in);
    ApplyPlannedRound(round, kProof, kHolding, &devices);
    return round;
  }
};

TEST(RoundPlannerTest, NothingIsSentBeforeAFillNotice) {
  Planner p(2);
  p.gap_elapsed = true;
  const PlannedRound round = p.Next();
  EXPECT_TRUE(round.parts.empty());
  EXPECT_FALSE(round.holding_used_up);
  EXPECT_FALSE(p.devices[0].probed);
}

TEST(RoundPlannerTest, ADeviceIsProbedAtOnceWhenNoticedAloneWithTheOthersJustNoticed) {
  Planner p(3);
  p.devices[0].noticed = true;
  PlannedRound round = p.Next();  // no gap needed: device 0 was just noticed
  EXPECT_FALSE(round.proof);
  EXPECT_EQ(round.parts, (Parts{{0, kProof}}));
  EXPECT_TRUE(p.devices[0].probed);
  EXPECT_EQ(p.devices[0].holding_sent, 1u);
  // Devices 1 and 2 noticed together later: their round leaves device 0 (already probed) out.
  p.devices[1].noticed = p.devices[2].noticed = true;
  round = p.Next();
  EXPECT_EQ(round.parts, (Parts{{1, kProof}, {2, kProof}}));
  // Then holding rounds wait for the random gap, and carry every noticed device.
  EXPECT_TRUE(p.Next().parts.empty());
  p.gap_elapsed = true;
  EXPECT_EQ(p.Next().parts, (Parts{{0, kProof + 1}, {1, kProof + 1}, {2, kProof + 1}}));
}

TEST(RoundPlannerTest, ProofRoundsGoBackToBackOnceClosingThenHoldingUntilTheWaveIsDone) {
  Planner p(2);
  p.devices[0].noticed = p.devices[1].noticed = true;
  EXPECT_EQ(p.Next().parts, (Parts{{0, kProof}, {1, kProof}}));  // the notice round
  p.closing = true;                                               // report in, every member filled
  for (uint32_t r = 0; r < kProof; ++r) {
    const PlannedRound round = p.Next();  // no gap: proof rounds follow at once
    EXPECT_TRUE(round.proof);
    EXPECT_EQ(round.parts, (Parts{{0, r}, {1, r}})) << "proof round " << r;
  }
  EXPECT_EQ(p.devices[0].proof_sent, kProof);
  // Proof done, wave not: holding rounds after their gap, so the node never learns it is over.
  EXPECT_TRUE(p.Next().parts.empty());
  p.gap_elapsed = true;
  const PlannedRound holding = p.Next();
  EXPECT_FALSE(holding.proof);
  EXPECT_EQ(holding.parts, (Parts{{0, kProof + 1}, {1, kProof + 1}}));
  p.wave_done = true;
  const PlannedRound done = p.Next();
  EXPECT_TRUE(done.parts.empty());
  EXPECT_FALSE(done.holding_used_up);
}

TEST(RoundPlannerTest, AProofRoundWaitsForClosingEvenWithEveryDeviceNoticed) {
  Planner p(2);
  p.devices[0].noticed = p.devices[1].noticed = true;
  p.gap_elapsed = true;
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(p.Next().proof);
  EXPECT_EQ(p.devices[0].proof_sent, 0u);
}

TEST(RoundPlannerTest, AUsedUpHoldingPoolIsSaidOnlyWhenAHoldingRoundWasDue) {
  Planner p(1);
  p.devices[0].noticed = true;
  p.gap_elapsed = true;
  for (uint32_t i = 0; i < kHolding; ++i) EXPECT_EQ(p.Next().parts.size(), 1u);
  const PlannedRound used_up = p.Next();
  EXPECT_TRUE(used_up.parts.empty());
  EXPECT_TRUE(used_up.holding_used_up);
  // A device with empty holding batches (q = 1) is never in a holding round; noticed, it is
  // probed without a round, and no pool is reported used up for that.
  Planner q1(1, /*has_holding=*/false);
  q1.devices[0].noticed = true;
  const PlannedRound notice = q1.Next();
  EXPECT_TRUE(notice.parts.empty());
  EXPECT_FALSE(notice.holding_used_up);
  EXPECT_TRUE(q1.devices[0].probed);
}

}  // namespace
}  // namespace wipeproof

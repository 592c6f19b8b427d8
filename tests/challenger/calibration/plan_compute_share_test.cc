// `plan --compute_rate`'s compute share (challenger/calibration/plan_compute_share.h): the statement's
// own rule over the plan's figures. Held labels are the planned ones less the expected bound; the
// work is the held shortest exclusive chains over the chunks (each device's plus one) at the
// format's compressions per node; the share is W / R over the fill and the proof rounds.
#include "challenger/calibration/plan_compute_share.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/exclusive_chains.h"

namespace wipeproof {
namespace {

constexpr uint32_t kM = 64;

// The `held` shortest chains over `chunks` copies of one chunk's chains, by sorting them all.
uint64_t ShortestChainsBySorting(uint64_t chunks, uint64_t held) {
  const ExclusiveChains chains = ComputeExclusiveChains(kM);
  std::vector<uint64_t> all;
  for (uint64_t c = 0; c < chunks; ++c) all.insert(all.end(), chains.lengths.begin(), chains.lengths.end());
  std::sort(all.begin(), all.end());
  return std::accumulate(all.begin(), all.begin() + static_cast<long>(held), uint64_t{0});
}

TEST(PlanComputeShare, TheStatementsRuleOverThePlansFigures) {
  // Two devices of 10 chunks and one of 5: 25 * 64 = 1600 planned labels over 25 + 3 chunks.
  const std::vector<PlanComputeDevices> devices = {{2, 10 * kM, 10}, {1, 5 * kM, 5}};
  const PlanComputeShare all = ComputePlanComputeShare(devices, kM, LabelFormat::kC1, 0.0, 9.0, 4, 1e6, 250'000);
  EXPECT_EQ(all.held_labels, 1600u);
  EXPECT_EQ(all.work_compressions, ShortestChainsBySorting(28, 1600));
  EXPECT_DOUBLE_EQ(all.min_compute_s, static_cast<double>(all.work_compressions) / 1e6);
  EXPECT_DOUBLE_EQ(all.interval_s, 9.0 + 4 * 0.25);
  EXPECT_DOUBLE_EQ(all.share, all.min_compute_s / 10.0);
  // An expected bound of 1% leaves 1600 - 16 held; 192 costs two compressions per node.
  const PlanComputeShare bounded = ComputePlanComputeShare(devices, kM, LabelFormat::k192, 0.01, 9.0, 4, 1e6, 250'000);
  EXPECT_EQ(bounded.held_labels, 1584u);
  EXPECT_EQ(bounded.work_compressions, 2 * ShortestChainsBySorting(28, 1584));
  // Twice the rate proves half the time.
  const PlanComputeShare faster = ComputePlanComputeShare(devices, kM, LabelFormat::kC1, 0.0, 9.0, 4, 2e6, 250'000);
  EXPECT_DOUBLE_EQ(faster.share * 2, all.share);
}

}  // namespace
}  // namespace wipeproof

// How `plan --occupancy_short_s` sizes occupancy windows (challenger/calibration/plan_occupancy.h):
// each row's gap gives the target T* and no more, its cost is its chunks at the verify rate, and
// more labels per round buy a longer gap and a higher d(b).
#include "challenger/calibration/plan_occupancy.h"

#include <gtest/gtest.h>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/session/occupancy_bound.h"

namespace wipeproof {
namespace {

constexpr uint32_t kM = 1024;

PlannedDevice Device(uint64_t chunks, uint32_t q) {
  PlannedDevice d;
  d.label_count = chunks * kM;
  d.labels_per_round = q;
  return d;
}

OccupancyPlanInputs Inputs() {
  OccupancyPlanInputs in;
  in.devices = {Device(4096, 8), Device(4096, 8), Device(16384, 32)};
  in.chunk_labels = kM;
  in.confidence = 0.99;
  in.shortfall_bytes = (4096 + 4096 + 16384) * uint64_t{kM} * 32 / 100;  // 1%
  in.short_time_us = 60'000'000;
  in.window_us = 3'600'000'000;
  in.verify_compressions_per_s_per_core = 5e7;
  return in;
}

TEST(PlanOccupancy, EachRowsGapGivesTheTargetAndItsCostIsItsChunks) {
  const OccupancyPlanInputs in = Inputs();
  auto rows = PlanOccupancy(in);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 7u);
  const double chunk_s = VerifyCompressionsPerChunk(in.format, kM) / 5e7;
  for (size_t i = 0; i < rows->size(); ++i) {
    const OccupancyPlanRow& r = (*rows)[i];
    const std::vector<uint32_t> labels = OccupancyLabelsByBytes(in.devices, kM, 3u << i);
    std::vector<OccupancyDevice> asked;
    uint32_t total = 0;
    for (size_t d = 0; d < labels.size(); ++d) {
      asked.push_back({in.devices[d].planned_bytes(), labels[d]});
      total += labels[d];
    }
    EXPECT_EQ(r.labels_per_round, total) << i;
    EXPECT_DOUBLE_EQ(r.detection, OccupancyDetection(asked, in.shortfall_bytes)) << i;
    ASSERT_GT(r.mean_gap_us, 0u) << i;
    // T* at the row's gap is the target, to the microsecond of rounding down the gap.
    const OccupancyStatement s = ComputeOccupancyStatement(asked, in.shortfall_bytes, 0.99, r.mean_gap_us, 0, UINT64_MAX);
    EXPECT_LE(s.short_time_us, in.short_time_us) << i;
    EXPECT_GT(s.short_time_us, in.short_time_us - 1000) << i;
    EXPECT_DOUBLE_EQ(r.rounds_per_hour, 3.6e9 / static_cast<double>(r.mean_gap_us));
    EXPECT_DOUBLE_EQ(r.chunks_per_node_hour, r.rounds_per_hour * total);
    EXPECT_NEAR(r.cpu_s_per_node_hour, r.chunks_per_node_hour * chunk_s, 1e-9 * r.cpu_s_per_node_hour);
    EXPECT_EQ(r.pool_rounds, OccupancyPoolRounds(in.window_us, r.mean_gap_us));
    EXPECT_EQ(r.challenger_bytes, r.pool_rounds * total * 32);
    EXPECT_TRUE(r.fits) << i;
    if (i > 0) {
      EXPECT_GT(r.labels_per_round, (*rows)[i - 1].labels_per_round);
      EXPECT_GT(r.detection, (*rows)[i - 1].detection);
      EXPECT_GT(r.mean_gap_us, (*rows)[i - 1].mean_gap_us);
    }
  }
  // Devices asked in proportion to their bytes: chunks per hour grow with the labels per round
  // (o / d(b) rises with o), the price of fewer rounds.
  EXPECT_GT((*rows)[6].chunks_per_node_hour, (*rows)[0].chunks_per_node_hour);
}

TEST(PlanOccupancy, RefusesWhatCannotBePlanned) {
  OccupancyPlanInputs in = Inputs();
  in.devices.clear();
  EXPECT_FALSE(PlanOccupancy(in).ok());
  in = Inputs();
  in.shortfall_bytes = (4096 + 4096 + 16384) * uint64_t{kM} * 32;
  EXPECT_FALSE(PlanOccupancy(in).ok());
  in = Inputs();
  in.confidence = 1;
  EXPECT_FALSE(PlanOccupancy(in).ok());
  in = Inputs();
  in.short_time_us = 0;
  EXPECT_FALSE(PlanOccupancy(in).ok());
  in = Inputs();
  in.verify_compressions_per_s_per_core = 0;
  EXPECT_FALSE(PlanOccupancy(in).ok());
  // A gap longer than the window does not fit it.
  in = Inputs();
  in.window_us = 1'000'000;
  auto rows = PlanOccupancy(in);
  ASSERT_TRUE(rows.ok());
  EXPECT_FALSE(rows->back().fits);
}

}  // namespace
}  // namespace wipeproof

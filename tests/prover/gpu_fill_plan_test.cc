// The fill planner (prover/backends/gpu/fill_plan.h) as a pure function: no runtime, no memory;
// pieces at made-up device addresses. Every chunk of the region is labelled by exactly one team
// of one launch, each label once; everything the plan places lies inside the side scratch or the
// pieces; the caps (side scratch, time-limited devices) and the 192 block-0 placement hold.
#include "prover/backends/gpu/fill_plan.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace gpu {
namespace {

using testing::Spec;

constexpr uint64_t kSideBase = 1ull << 44;

// Three pieces of uneven sizes at made-up addresses (nothing is read or written).
SlotMap Pieces(uint64_t labels) {
  std::vector<DeviceAllocation> pieces;
  const uint64_t sizes[3] = {labels / 3 + 17, labels / 3 - 40, 0};
  uint64_t left = labels;
  for (int i = 0; i < 3 && left > 0; ++i) {
    const uint64_t n = i == 2 ? left : std::min(sizes[i], left);
    pieces.push_back({reinterpret_cast<void*>((uint64_t{i} + 1) << 36), n * 32});
    left -= n;
  }
  return SlotMap(pieces);
}

FillDevice Device(const SlotMap& slots, const FillTuning& tuning = {}) {
  FillDevice d;
  d.id = "PLAN-0";
  d.multiprocessors = 4;
  d.slots = &slots;
  for (uint32_t threads : PlannedTeamSizes(ClampTuning(tuning))) d.teams_per_multiprocessor[threads] = 2;
  return d;
}

StatusOr<FillPlan> Plan(const RegionSpec& spec, const FillDevice& device, const FillTuning& tuning,
                        bool least_side = false) {
  WP_ASSIGN_OR_RETURN(FillBudget budget, BudgetFill(spec, tuning, false, device));
  const uint64_t side = least_side ? budget.side_min_bytes : budget.side_want_bytes;
  EXPECT_LE(budget.side_min_bytes, budget.side_want_bytes);
  return PlanFill(std::move(budget), device, kSideBase, side);
}

// Each label of the region written by exactly one team of one launch; every address inside the
// side scratch or a piece.
void ExpectCovered(const FillPlan& plan, const RegionSpec& spec, const SlotMap& slots) {
  const RegionChunks& rc = plan.budget.rc;
  const uint64_t side_end = kSideBase + plan.stats.side_scratch_bytes;
  std::map<uint64_t, int> chunk_teams;
  uint64_t labels = 0;
  for (const PlannedLaunch& launch : plan.launches) {
    labels += launch.labels;
    ASSERT_EQ(launch.teams.size(), launch.wave.teams.size());
    EXPECT_EQ(launch.launch.args.team_count, launch.teams.size());
    for (const TeamDesc& d : launch.teams) {
      for (uint64_t c = d.first_chunk; c < d.first_chunk + d.chunks; ++c) ++chunk_teams[c];
      if (d.extra != 0) {
        EXPECT_GE(d.extra, kSideBase);
        EXPECT_LT(d.extra, side_end);
      }
      if (d.inplace_slots == 0) continue;
      bool in_a_piece = false;
      for (uint32_t i = 0; i < slots.pieces(); ++i) {
        const uint64_t base = slots.bases()[i], end = base + (slots.slot_begin()[i + 1] - slots.slot_begin()[i]) * 32;
        in_a_piece = in_a_piece || (d.seg0 >= base && d.seg0 < end);
      }
      EXPECT_TRUE(in_a_piece) << "team at chunk " << d.first_chunk;
    }
  }
  EXPECT_EQ(labels, spec.count);
  ASSERT_EQ(chunk_teams.size(), rc.chunk_end - rc.chunk_begin);
  for (const auto& [chunk, teams] : chunk_teams) EXPECT_EQ(teams, 1) << "chunk " << chunk;
  for (uint64_t address : {plan.slot_table_dev, plan.team_table_dev, plan.words_dev, plan.graphs[0].words_dev}) {
    EXPECT_GE(address, kSideBase);
    EXPECT_LT(address, side_end);
  }
}

TEST(FillPlanTest, EveryChunkIsLabelledOnceWithPartialChunksInTheFirstLaunch) {
  const uint32_t m = 256;
  const RegionSpec spec = Spec(LabelFormat::kC1, m, 100, 300 * m + 57);  // starts and ends inside a chunk
  const SlotMap slots = Pieces(spec.count);
  auto plan = Plan(spec, Device(slots), FillTuning());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ExpectCovered(*plan, spec, slots);
  EXPECT_EQ(plan->stats.partial_chunks, 2u);
  std::set<uint64_t> scratch_in_first;
  for (const TeamDesc& d : plan->launches.front().teams) {
    if (d.inplace_slots == 0) scratch_in_first.insert(d.first_chunk);
  }
  EXPECT_EQ(scratch_in_first, (std::set<uint64_t>{0, (100 + spec.count - 1) / m}));
  // In place everywhere else: the label layout's runs name every whole chunk.
  uint64_t in_runs = 0;
  for (const LayoutRun& r : plan->runs) in_runs += r.chunk_end - r.chunk_begin;
  EXPECT_EQ(in_runs, plan->budget.whole_chunks);
}

// FillTuning::teams_per_slot: a launch of N times the teams that fit (8 here: 4 multiprocessors x 2),
// each as many chunks as before, so N times fewer launches; still every chunk once, 192 too.
TEST(FillPlanTest, MoreTeamsPerSlotMeanFewerLaunchesOfMoreTeams) {
  for (const LabelFormat format : {LabelFormat::kC1, LabelFormat::k192}) {
    const uint32_t m = 256;
    const RegionSpec spec = Spec(format, m, 0, 8 * 16 * 4 * m);  // 4 full waves of 8 teams of 16 chunks
    const SlotMap slots = Pieces(spec.count);
    FillTuning one, four;
    four.teams_per_slot = 4;
    auto plan1 = Plan(spec, Device(slots, one), one);
    auto plan4 = Plan(spec, Device(slots, four), four);
    ASSERT_TRUE(plan1.ok() && plan4.ok()) << plan4.status().ToString();
    ExpectCovered(*plan4, spec, slots);
    ASSERT_EQ(plan1->launches.size(), 4u);
    ASSERT_EQ(plan4->launches.size(), 1u);
    EXPECT_EQ(plan1->launches[0].teams.size(), 8u);
    EXPECT_EQ(plan4->launches[0].teams.size(), 32u);
    for (const TeamDesc& d : plan4->launches[0].teams) EXPECT_EQ(d.chunks, 16u);
  }
  FillTuning huge;
  huge.teams_per_slot = 1u << 30;  // clamped, not a team table of 2^33 entries
  EXPECT_EQ(ClampTuning(huge).teams_per_slot, kMaxTeamsPerSlot);
  huge.teams_per_slot = 0;
  EXPECT_EQ(ClampTuning(huge).teams_per_slot, 1u);
}

TEST(FillPlanTest, TheLeastSideScratchStillLabelsEverythingInMoreLaunches) {
  const uint32_t m = 1000;  // not a power of two: every in-place chunk has work labels outside its slots
  const RegionSpec spec = Spec(LabelFormat::kC1, m, 0, 64 * m);
  const SlotMap slots = Pieces(spec.count);
  auto roomy = Plan(spec, Device(slots), FillTuning());
  auto tight = Plan(spec, Device(slots), FillTuning(), /*least_side=*/true);
  ASSERT_TRUE(roomy.ok() && tight.ok()) << tight.status().ToString();
  ExpectCovered(*tight, spec, slots);
  EXPECT_GT(tight->launches.size(), roomy->launches.size());
  // The least side scratch holds one chunk's extras (768 bytes), plus the slack the budget keeps
  // for a last chunk's own program (two 256-byte areas, unused here): two chunks per launch.
  for (const PlannedLaunch& l : tight->launches) EXPECT_LE(l.stats.chunks, 2u);
  EXPECT_EQ(tight->launches.size(), 32u);
}

TEST(FillPlanTest, ATimeLimitedDeviceGetsLaunchesOfAboutASecond) {
  const uint32_t m = 1024;
  const RegionSpec spec = Spec(LabelFormat::kC1, m, 0, 40 * m);
  const SlotMap slots = Pieces(spec.count);
  FillDevice device = Device(slots);
  device.kernel_time_limited = true;
  // 2 * 10^6 compressions per second at a quarter: 5 * 10^5 a second, 96,254 per chunk: 5 chunks.
  device.raw_compressions_per_s = 2e6;
  auto plan = Plan(spec, device, FillTuning());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ExpectCovered(*plan, spec, slots);
  EXPECT_EQ(plan->stats.time_limited_wave_chunks, 5u);
  for (const PlannedLaunch& l : plan->launches) EXPECT_LE(l.stats.chunks, 5u);
  EXPECT_EQ(plan->launches.size(), 8u);
}

// 192 with a side scratch too small for the block-0 table (m = 1024: 96,254 nodes, 3 MB): the
// table in the top of the region's own slots (the region must be at least 4x the table's 94
// chunks), the chunks under it labelled last, in their own phase, reading the side scratch's prefix.
TEST(FillPlanTest, A192BlockZeroTableInTheRegionDefersTheChunksUnderIt) {
  const uint32_t m = 1024;
  const RegionSpec spec = Spec(LabelFormat::k192, m, 0, 400 * m);
  const SlotMap slots = Pieces(spec.count);
  FillTuning tuning;
  tuning.side_scratch_bytes = 4 << 20;
  tuning.cv0_side_max_bytes = 1 << 20;
  auto plan = Plan(spec, Device(slots, tuning), tuning);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  ExpectCovered(*plan, spec, slots);
  EXPECT_GT(plan->stats.deferred_chunks, 0u);
  ASSERT_EQ(plan->cv0_builds.size(), 2u);  // the side prefix, then the whole table in the region
  EXPECT_LT(plan->cv0_builds[0].nodes, plan->cv0_builds[1].nodes);
  EXPECT_EQ(plan->cv0_builds[1].nodes, plan->budget.program.nodes);
  EXPECT_LT(plan->cv0_builds[1].address, kSideBase);  // in a piece, not the side scratch
  EXPECT_EQ(plan->launches.back().stats.phase, "deferred");
  EXPECT_EQ(plan->launches.back().launch.args.cv0_nodes, plan->cv0_builds[0].nodes);
  EXPECT_EQ(plan->launches.front().launch.args.cv0_nodes, plan->budget.program.nodes);
  uint64_t deferred = 0;
  for (const PlannedLaunch& l : plan->launches) deferred += l.stats.phase == "deferred" ? l.stats.chunks : 0;
  EXPECT_EQ(deferred, plan->stats.deferred_chunks);
}

// A launch's team timer words (kernel_args.h kTeamTimer*) as shares of the launch's span: three
// teams starting at T+100, T+100, T+110 and ending at T+200, T+150, T+140 (spans 100, 50, 30) in a
// launch from T+100 to T+200 ran 0.60 of it on average; the first ended at 0.40, the last started
// at 0.10. T is near 2^64, so the sums of three wrap (a device timer read in nanoseconds may). No team
// recorded, a team that started but did not end, or no span: no figures.
TEST(FillPlanTest, TeamSpansAreSharesOfTheLaunch) {
  const uint64_t T = ~uint64_t{0} - 300;
  LaunchWords words;
  uint64_t* w = words.team_timer;
  for (uint64_t s : {100, 100, 110}) w[kTeamTimerStartSum] += T + s;
  for (uint64_t e : {200, 150, 140}) w[kTeamTimerEndSum] += T + e;
  w[kTeamTimerFirstStartNot] = ~(T + 100);
  w[kTeamTimerLastStart] = T + 110;
  w[kTeamTimerFirstEndNot] = ~(T + 140);
  w[kTeamTimerLastEnd] = T + 200;
  w[kTeamTimerStarted] = w[kTeamTimerEnded] = 3;
  const TeamSpans t = TeamSpansFrom(words);
  EXPECT_EQ(t.teams, 3u);
  EXPECT_DOUBLE_EQ(t.mean_share, 0.60);
  EXPECT_DOUBLE_EQ(t.first_end_share, 0.40);
  EXPECT_DOUBLE_EQ(t.last_start_share, 0.10);
  EXPECT_EQ(TeamSpansFrom(LaunchWords{}).teams, 0u) << "zeroed words (no timer) read as no figures";
  LaunchWords unfinished = words;
  unfinished.team_timer[kTeamTimerStarted] = 4;
  EXPECT_EQ(TeamSpansFrom(unfinished).teams, 0u);
  w[kTeamTimerLastEnd] = T + 100;  // a launch of no span
  EXPECT_EQ(TeamSpansFrom(words).teams, 0u);
}

TEST(FillPlanTest, ErrorsSayWhatIsWrong) {
  const SlotMap slots = Pieces(1000);
  EXPECT_EQ(BudgetFill(Spec(LabelFormat::kC1, 16, 0, 1001), FillTuning(), false, Device(slots)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(BudgetFill(Spec(LabelFormat::kC1, 0, 0, 10), FillTuning(), false, Device(slots)).status().code(),
            StatusCode::kInvalidArgument);
  FillDevice no_occupancy = Device(slots);
  no_occupancy.teams_per_multiprocessor.clear();
  EXPECT_EQ(BudgetFill(Spec(LabelFormat::kC1, 16, 0, 100), FillTuning(), false, no_occupancy).status().code(),
            StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof

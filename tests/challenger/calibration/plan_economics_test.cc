// The economics of `plan --economics_p999_us` (challenger/calibration/plan_economics.h) with real
// values: per honest round p99.9 the m is the single plan's; halving p99.9 halves m down to the m
// of the shortest deadline; the challenger's CPU per node-wipe follows the documented formula,
// recomputed here from the graph's own node count; the modelled fills of the named shapes are the
// device model's where it has a figure, scaled by nodes per label elsewhere, and name the shapes of
// kernels/gpu/gpu_shapes.h with their memory.
//
// Worked by hand (docs/calibration.md "The rule"), margin 0.2, c1: deadline = ceil(1.2 p99.9);
// floor(m) = 1.5 m t_min / 2: commodity-cpu (25 ns) 18.75 ns m, fpga-asic (5 ns) 3.75 ns m.
//   p99.9 100 us: deadline 120 us; commodity-cpu m = 2^13 (6400 -> 8192), fpga-asic 2^15 (32000).
//   p99.9 1 us: deadline 2 us; commodity-cpu 2^7 (107), fpga-asic 2^10 (534): the shortest deadline.
#include "challenger/calibration/plan_economics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "challenger/calibration/modelled_gpu_fills.h"
#include "challenger/calibration/parameter_planner.h"
#include "challenger/session/session_plan.h"
#include "kernels/gpu/gpu_shapes.h"
#include "kernels/graph_metrics.h"

namespace wipeproof {
namespace {

const AdversaryClass kCpu{"commodity-cpu", 25'000, 2.0};
const AdversaryClass kAsic{"fpga-asic", 5'000, 2.0};
constexpr uint64_t kH200Bytes = 150754820096ull;
constexpr uint64_t kReserve = 536870912ull;  // plan's --gpu_reserve_bytes default
constexpr double kVerifyRate = 8e7;

// 8 x H200 at 3.5 GiB/s at m = 2^14, margin 0.2, both built-in classes: `plan --gpus=8 --margin=0.2
// --verify_rate=8e7`.
PlanInputs EightH200() {
  PlanInputs in;
  in.devices.push_back({"NVIDIA H200", 8, kH200Bytes, kReserve, 3.5 * 1073741824.0});
  in.policy.round_margin = 0.2;
  in.classes = {kCpu, kAsic};
  in.verify_compressions_per_s_per_core = kVerifyRate;
  in.challenger_cores = 64;
  return in;
}

double NodesPerLabel(uint32_t m) { return static_cast<double>(ComputeGraphMetrics(m).nodes_hashed) / m; }

TEST(PlanEconomicsTest, EachRoundTimeGetsTheSinglePlansParameters) {
  const PlanInputs in = EightH200();
  const std::vector<uint64_t> p999 = {25, 50, 100, 200, 400, 800, 1600};
  auto e = ComputePlanEconomics(in, p999, kReserve);
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_EQ(e->rows.size(), p999.size());
  for (size_t i = 0; i < p999.size(); ++i) {
    PlanInputs one = in;
    one.honest_round_p999_us = p999[i];
    auto plan = ComputeFleetPlan(one);
    ASSERT_TRUE(plan.ok());
    const EconomicsRow& row = e->rows[i];
    EXPECT_EQ(row.honest_round_p999_us, p999[i]);
    ASSERT_EQ(row.classes.size(), 2u);
    for (size_t c = 0; c < 2; ++c) {
      SCOPED_TRACE("p99.9 " + std::to_string(p999[i]) + " class " + row.classes[c].adversary.name);
      const ClassPlan& want = plan->classes[c];
      ASSERT_TRUE(row.classes[c].feasible);
      EXPECT_EQ(row.classes[c].chunk_labels, want.chunk_labels);
      EXPECT_EQ(row.classes[c].round_deadline_us, want.round_deadline_us);
      EXPECT_EQ(row.classes[c].rounds, want.rounds);
      EXPECT_DOUBLE_EQ(row.classes[c].cpu_s_per_node_wipe, want.expected_labels_cpu_s);
      EXPECT_DOUBLE_EQ(row.classes[c].node_wipes_per_core_hour, want.verification_node_wipes_per_core_hour);
      ASSERT_EQ(row.classes[c].fills.size(), 3u);
    }
  }
  // The hand-worked values at 100 us: deadline 120 us, m = 2^13 and 2^15.
  EXPECT_EQ(e->rows[2].classes[0].round_deadline_us, 120u);
  EXPECT_EQ(e->rows[2].classes[0].chunk_labels, 1u << 13);
  EXPECT_EQ(e->rows[2].classes[1].chunk_labels, 1u << 15);
  // 1600 us: deadline 1920 us; fpga-asic 512000 -> 2^19, commodity-cpu 102400 -> 2^17.
  EXPECT_EQ(e->rows[6].classes[0].chunk_labels, 1u << 17);
  EXPECT_EQ(e->rows[6].classes[1].chunk_labels, 1u << 19);
}

TEST(PlanEconomicsTest, HalvingTheRoundTimeHalvesMDownToTheShortestDeadline) {
  const PlanInputs in = EightH200();
  std::vector<uint64_t> p999;
  for (uint64_t p = 2048; p >= 1; p /= 2) p999.push_back(p);  // 2048, 1024, ..., 1
  auto e = ComputePlanEconomics(in, p999, kReserve);
  ASSERT_TRUE(e.ok()) << e.status().message();
  // The smallest m each class can reach: the deadline of p99.9 = 1 us, ceil(1.2) = 2 us.
  const uint32_t floor_m[2] = {1u << 7, 1u << 10};  // 2 us / 18.75 ns = 107; 2 us / 3.75 ns = 534
  for (size_t c = 0; c < 2; ++c) {
    SCOPED_TRACE(in.classes[c].name);
    ASSERT_TRUE(e->rows.back().classes[c].feasible);
    EXPECT_EQ(e->rows.back().classes[c].chunk_labels, floor_m[c]);
    for (size_t i = 0; i + 1 < e->rows.size(); ++i) {
      const EconomicsClass& slow = e->rows[i].classes[c];
      const EconomicsClass& fast = e->rows[i + 1].classes[c];
      ASSERT_TRUE(slow.feasible && fast.feasible) << e->rows[i].honest_round_p999_us;
      EXPECT_EQ(fast.chunk_labels, std::max(floor_m[c], slow.chunk_labels / 2)) << e->rows[i].honest_round_p999_us;
      // A smaller m is cheaper to fill on every shape and to recompute for the challenger.
      if (fast.chunk_labels < slow.chunk_labels) {
        for (size_t s = 0; s < 3; ++s) EXPECT_LT(fast.fills[s].fill_s, slow.fills[s].fill_s);
        EXPECT_LT(fast.cpu_s_per_node_wipe, slow.cpu_s_per_node_wipe);
      }
    }
  }
  // fpga-asic reaches its floor one step early: 2 us -> deadline 3 us -> 800 -> 2^10 as at 1 us.
  EXPECT_EQ(e->rows[e->rows.size() - 2].classes[1].chunk_labels, 1u << 10);
  // 2048 us: deadline 2458 us; fpga-asic 655467 -> 2^20, the cap; 4096 us is past it.
  EXPECT_EQ(e->rows[0].classes[1].chunk_labels, 1u << 20);
  auto past = ComputePlanEconomics(in, {4096}, kReserve);
  ASSERT_TRUE(past.ok());
  EXPECT_TRUE(past->rows[0].classes[0].feasible);
  EXPECT_FALSE(past->rows[0].classes[1].feasible);
  EXPECT_NE(past->rows[0].classes[1].refusal.find("no m up to 2^20"), std::string::npos)
      << past->rows[0].classes[1].refusal;
  EXPECT_TRUE(past->rows[0].classes[1].fills.empty());
}

// CPU-s per node-wipe = count * (E + kHoldingBatches * max(1, q/8)) * nodes_hashed(m) / verify rate
// (c1), E = C (1 - (1 - q/C)^R) the expected distinct chunks, q the smallest <= 64 reaching the
// device's share ceil(N C / sum C) in R rounds: all recomputed here from the graph and the spec.
TEST(PlanEconomicsTest, ChallengerCpuPerNodeWipeFollowsTheFormula) {
  PlanInputs in = EightH200();
  in.nodes_per_wave = 3;  // per node-wipe, not per wave
  auto e = ComputePlanEconomics(in, {100, 1600}, kReserve);
  ASSERT_TRUE(e.ok()) << e.status().message();
  const uint64_t n = 688;  // ceil(ln(0.001) / ln(0.99)) = ceil(687.3)
  for (const EconomicsRow& row : e->rows) {
    for (const EconomicsClass& c : row.classes) {
      SCOPED_TRACE(std::to_string(row.honest_round_p999_us) + " us " + c.adversary.name);
      ASSERT_TRUE(c.feasible);
      const uint32_t m = c.chunk_labels;
      const double chunks = std::floor(static_cast<double>(kH200Bytes - kReserve) / 32 / m);
      const double share = std::ceil(static_cast<double>(n) / 8);  // equal GPUs: 86 each
      ASSERT_EQ(c.rounds, 2u);
      uint32_t q = 1;
      auto distinct = [&](uint32_t qq) { return chunks * (1 - std::pow(1 - qq / chunks, c.rounds)); };
      while (distinct(q) < share) ++q;
      EXPECT_EQ(q, 44u);
      const double per_chunk = static_cast<double>(ComputeGraphMetrics(m).nodes_hashed);
      const double want = 8 * (distinct(q) + kHoldingBatches * std::max(1u, q / 8)) * per_chunk / kVerifyRate;
      EXPECT_NEAR(c.cpu_s_per_node_wipe, want, want * 1e-9);
      EXPECT_NEAR(c.node_wipes_per_core_hour, 3600 / want, 3600 / want * 1e-9);
    }
  }
  // Real values: 2^15 hashes 7012350 nodes per chunk (214 per label), 2^19 181403646 (346); 8 x 88
  // chunks of the rounds (less a few repeats) plus 8 x 16 x 5 of the holding pool, ~1344 in all, at
  // 80 M/s: 117.8 s, as docs/calibration.md's worked example has it for 8 x H200 at 2^15; 3043.6 s.
  EXPECT_NEAR(e->rows[0].classes[1].cpu_s_per_node_wipe, 117.8, 0.05);
  EXPECT_NEAR(e->rows[1].classes[1].cpu_s_per_node_wipe, 3043.6, 0.5);
  EXPECT_NEAR(e->rows[0].classes[1].node_wipes_per_core_hour, 30.56, 0.02);
  // The figures: 3.05 M compressions per checked chunk at 2^14, 36.2 M at 2^17.
  EXPECT_NEAR(ComputeGraphMetrics(1u << 14).nodes_hashed / 1e6, 3.05, 0.01);
  EXPECT_NEAR(ComputeGraphMetrics(1u << 17).nodes_hashed / 1e6, 36.2, 0.1);
}

TEST(PlanEconomicsTest, ModelledFillsNameTheShapesAndTheirMemory) {
  ASSERT_EQ(ModelledGpuFills().size(), 9u);
  for (const ModelledGpuFill& f : ModelledGpuFills()) {
    SCOPED_TRACE(f.shape);
    gpu::GpuShape shape;
    ASSERT_TRUE(gpu::GpuShapeByName(f.shape, &shape));
    EXPECT_EQ(shape.name, f.shape);
    EXPECT_EQ(f.memory_bytes, shape.memory_bytes);
    // The model fills all memory less the runtime's context, never more.
    EXPECT_LE(f.labels * 32, shape.memory_bytes - shape.context_bytes);
    EXPECT_GT(f.labels * 32, (shape.memory_bytes - shape.context_bytes) * 0.99);
    EXPECT_GT(f.fill_s, 0);
  }
  std::vector<std::string> names;
  for (const gpu::GpuShape& s : gpu::NamedGpuShapes()) names.push_back(s.name);
  EXPECT_EQ(ModelledGpuShapes(), names);
  EXPECT_NE(ModelledGpuFillsSource().find("modelled, not measured"), std::string::npos);
}

TEST(PlanEconomicsTest, ShapeFillIsTheModelsAtItsMAndScaledByNodesPerLabelElsewhere) {
  const ModelledGpuFill& h200_14 = ModelledGpuFills()[0];
  ASSERT_EQ(h200_14.shape, "H200");
  ASSERT_EQ(h200_14.chunk_labels, 1u << 14);
  ASSERT_EQ(h200_14.labels % (1u << 14), 0u);
  // A reserve leaving exactly the model's labels: the model's own 34.8 s.
  uint32_t from = 0;
  auto exact = ModelledShapeFillSeconds("H200", LabelFormat::kC1, 1u << 14, kH200Bytes - h200_14.labels * 32, &from);
  ASSERT_TRUE(exact.ok());
  EXPECT_NEAR(*exact, 34.8153, 1e-9);
  EXPECT_EQ(from, 1u << 14);
  // 2^15 scales from 2^14 (one step away), 2^16 from 2^17.
  const double rate14 = h200_14.labels * 32 / 34.8153;
  const double planned15 = std::floor((kH200Bytes - kReserve) / 32.0 / (1u << 15)) * (1u << 15) * 32;
  auto at15 = ModelledShapeFillSeconds("H200", LabelFormat::kC1, 1u << 15, kReserve, &from);
  ASSERT_TRUE(at15.ok());
  EXPECT_EQ(from, 1u << 14);
  EXPECT_NEAR(*at15, planned15 / (rate14 * NodesPerLabel(1u << 14) / NodesPerLabel(1u << 15)), 1e-6);
  auto at16 = ModelledShapeFillSeconds("H200", LabelFormat::kC1, 1u << 16, kReserve, &from);
  ASSERT_TRUE(at16.ok());
  EXPECT_EQ(from, 1u << 17);
  // The scaling agrees with the model: 2^17's figure scaled to 2^14 is within 3% of the model at 2^14.
  for (const std::string& shape : ModelledGpuShapes()) {
    const ModelledGpuFill* f14 = nullptr;
    const ModelledGpuFill* f17 = nullptr;
    for (const ModelledGpuFill& f : ModelledGpuFills()) {
      if (f.shape == shape && f.format == LabelFormat::kC1) (f.chunk_labels == (1u << 14) ? f14 : f17) = &f;
    }
    ASSERT_TRUE(f14 != nullptr && f17 != nullptr) << shape;
    const double scaled = f17->BytesPerSecond() * NodesPerLabel(1u << 17) / NodesPerLabel(1u << 14);
    EXPECT_NEAR(scaled / f14->BytesPerSecond(), 1, 0.03) << shape;
  }
  // 192 has one figure, at 2^17: every m scales from it.
  auto f192 = ModelledShapeFillSeconds("MI300X", LabelFormat::k192, 1u << 12, kReserve, &from);
  ASSERT_TRUE(f192.ok());
  EXPECT_EQ(from, 1u << 17);
  EXPECT_EQ(ModelledShapeFillSeconds("A100", LabelFormat::kC1, 1u << 14, kReserve).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(ModelledShapeFillSeconds("H100", LabelFormat::kC1, 1u << 14, 85520809984ull).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ModelledShapeFillSeconds("H100", LabelFormat::kC1, 0, kReserve).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(PlanEconomicsTest, RefusesWhatItCannotCompare) {
  const PlanInputs in = EightH200();
  EXPECT_EQ(ComputePlanEconomics(in, {}, kReserve).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputePlanEconomics(in, {100, 0}, kReserve).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputePlanEconomics(in, {kMaxHonestRoundP999Us + 1}, kReserve).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputePlanEconomics(in, std::vector<uint64_t>(kMaxEconomicsRoundTimes + 1, 100), kReserve).status().code(),
            StatusCode::kInvalidArgument);
  PlanInputs fixed = in;
  fixed.profile.emplace();
  EXPECT_EQ(ComputePlanEconomics(fixed, {100}, kReserve).status().code(), StatusCode::kInvalidArgument);
  // A reserve that leaves the H100 no chunk: named.
  auto big = ComputePlanEconomics(in, {100}, 85520809984ull);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("H100"), std::string::npos) << big.status().message();
}

}  // namespace
}  // namespace wipeproof

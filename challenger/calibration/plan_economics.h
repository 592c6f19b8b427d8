// The economics of a faster network, behind `wipeproof-challenger plan --economics_p999_us`: for
// each honest round p99.9 of a list, per adversary class, the m the deadline rule allows, the fill
// time of one GPU of each named shape at that m, and the challenger's CPU per node-wipe. A smaller
// p99.9 allows a shorter deadline, so a smaller m (halving p99.9 halves m, down to the m of the
// shortest deadline), so cheaper labels to fill and to recompute (docs/calibration.md "What a
// faster network buys").
//
// Per p99.9 the node of `node` (its devices, policy, classes, verify rate, wave) is planned by
// ComputeFleetPlan exactly as `plan --round_p999_us=p99.9` would plan it; from that plan:
//   m, round deadline, R: the class's;
//   challenger CPU-seconds per node-wipe = the class's expected_labels_cpu_s / nodes_per_wave:
//     sum over the node's devices of count * (expected distinct chunks + kHoldingBatches * max(1, q/8))
//     * VerifyCompressionsPerChunk(format, m) / the verify rate per core (parameter_planner.h);
//   node-wipes per challenger core-hour = 3600 / that.
// The fill per named shape is MODELLED (modelled_gpu_fills.h): one device of the shape, its
// memory_bytes less `gpu_reserve_bytes` planned in whole chunks of m, at the model's rate for the
// same format at the modelled m nearest to m (in log2; a tie takes the larger), scaled to m by the
// graph's nodes per label as plan scales every fill rate (FillSecondsAt). A node's GPUs fill
// concurrently, so it is also the fill of a node of such GPUs.
//
// Units: microseconds for round times and deadlines, seconds for fills and CPU, bytes.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"
#include "kernels/label_spec.h"

namespace wipeproof {

inline constexpr size_t kMaxEconomicsRoundTimes = 64;  // values in one economics list

struct ShapeFill {
  std::string shape;                // "H200", "H100", "MI300X"
  uint32_t model_chunk_labels = 0;  // m of the modelled figure scaled from
  double fill_s = 0;                // one device of the shape at the row's m, modelled
};

struct EconomicsClass {
  AdversaryClass adversary;
  bool feasible = false;
  std::string refusal;  // why not, when !feasible (ComputeFleetPlan's refusal)
  uint32_t chunk_labels = 0;
  uint64_t round_deadline_us = 0;
  uint32_t rounds = 0;
  std::vector<ShapeFill> fills;         // one per ModelledGpuShapes(), in that order
  double cpu_s_per_node_wipe = 0;       // challenger CPU-seconds of expected labels, one node-wipe
  double node_wipes_per_core_hour = 0;  // 3600 / cpu_s_per_node_wipe
};

struct EconomicsRow {
  uint64_t honest_round_p999_us = 0;
  std::vector<EconomicsClass> classes;  // in the order of PlanInputs::classes
};

struct PlanEconomics {
  LabelFormat format = LabelFormat::kC1;
  uint64_t gpu_reserve_bytes = 0;
  std::vector<EconomicsRow> rows;  // in the order of the list given
};

// Errors: INVALID_ARGUMENT for an empty list or one longer than kMaxEconomicsRoundTimes, a p99.9 of
// 0 or above kMaxHonestRoundP999Us, `node` with a parameter profile (its m is fixed, nothing to
// compare), a reserve that leaves a named shape no chunk of some m; and ComputeFleetPlan's errors.
// A class no m fits at a p99.9 is returned with feasible = false and the refusal.
StatusOr<PlanEconomics> ComputePlanEconomics(const PlanInputs& node, const std::vector<uint64_t>& honest_round_p999_us,
                                             uint64_t gpu_reserve_bytes);

// The modelled fill of one device of `shape` at m (as above); *model_chunk_labels gets the m of the
// figure it was scaled from when not null. Errors: NOT_FOUND for a shape or format without a
// modelled figure; INVALID_ARGUMENT when m is out of [1, 2^20] or the reserve leaves no chunk of m.
StatusOr<double> ModelledShapeFillSeconds(const std::string& shape, LabelFormat format, uint32_t chunk_labels,
                                          uint64_t reserve_bytes, uint32_t* model_chunk_labels = nullptr);

}  // namespace wipeproof

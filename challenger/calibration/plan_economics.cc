#include "challenger/calibration/plan_economics.h"

#include <cstdlib>

#include "challenger/calibration/modelled_gpu_fills.h"
#include "challenger/session/session_plan.h"
#include "common/numbers.h"

namespace wipeproof {

StatusOr<double> ModelledShapeFillSeconds(const std::string& shape, LabelFormat format, uint32_t chunk_labels,
                                          uint64_t reserve_bytes, uint32_t* model_chunk_labels) {
  if (!ChunkLabelsInRange(chunk_labels)) {
    return InvalidArgumentError("m = " + std::to_string(chunk_labels) + " is out of [1, 2^20]");
  }
  // The figure of this shape and format nearest to m in log2; a tie takes the larger m.
  const ModelledGpuFill* nearest = nullptr;
  for (const ModelledGpuFill& f : ModelledGpuFills()) {
    if (f.shape != shape || f.format != format) continue;
    const int distance = std::abs(FloorLog2(f.chunk_labels) - FloorLog2(chunk_labels));
    if (nearest == nullptr) {
      nearest = &f;
      continue;
    }
    const int best = std::abs(FloorLog2(nearest->chunk_labels) - FloorLog2(chunk_labels));
    if (distance < best || (distance == best && f.chunk_labels > nearest->chunk_labels)) nearest = &f;
  }
  if (nearest == nullptr) {
    return NotFoundError("no modelled " + std::string(LabelFormatName(format)) + " fill for GPU shape " + shape);
  }
  if (PlannedLabelCount(nearest->memory_bytes, reserve_bytes, chunk_labels) == 0) {
    return InvalidArgumentError(shape + ": " + std::to_string(nearest->memory_bytes) + " bytes less the reserve " +
                                std::to_string(reserve_bytes) +
                                " hold no chunk of m = " + std::to_string(chunk_labels));
  }
  PlanDeviceSpec device;
  device.model = shape;
  device.capacity_bytes = nearest->memory_bytes;
  device.reserve_bytes = reserve_bytes;
  device.fill_bytes_per_s = nearest->BytesPerSecond();
  device.fill_rate_chunk_labels = nearest->chunk_labels;
  if (model_chunk_labels != nullptr) *model_chunk_labels = nearest->chunk_labels;
  return FillSecondsAt(device, nearest->chunk_labels, chunk_labels);
}

StatusOr<PlanEconomics> ComputePlanEconomics(const PlanInputs& node, const std::vector<uint64_t>& honest_round_p999_us,
                                             uint64_t gpu_reserve_bytes) {
  if (honest_round_p999_us.empty()) return InvalidArgumentError("no honest round p99.9 to compare");
  if (honest_round_p999_us.size() > kMaxEconomicsRoundTimes) {
    return InvalidArgumentError(std::to_string(honest_round_p999_us.size()) + " honest round p99.9 values: at most " +
                                std::to_string(kMaxEconomicsRoundTimes));
  }
  if (node.profile) {
    return InvalidArgumentError("a parameter profile fixes m and the deadline: the economics compare round times");
  }
  for (uint64_t p : honest_round_p999_us) {
    if (p == 0 || p > kMaxHonestRoundP999Us) {
      return InvalidArgumentError("honest round p99.9 " + std::to_string(p) + " us is out of [1, " +
                                  std::to_string(kMaxHonestRoundP999Us) + "]");
    }
  }
  PlanEconomics out;
  out.format = node.policy.format;
  out.gpu_reserve_bytes = gpu_reserve_bytes;
  for (uint64_t p : honest_round_p999_us) {
    PlanInputs in = node;
    in.honest_round_p999_us = p;
    WP_ASSIGN_OR_RETURN(PlanResult plan, ComputeFleetPlan(in));
    EconomicsRow row;
    row.honest_round_p999_us = p;
    for (const ClassPlan& c : plan.classes) {
      EconomicsClass e;
      e.adversary = c.adversary;
      e.feasible = c.feasible;
      e.refusal = c.refusal;
      if (c.feasible) {
        e.chunk_labels = c.chunk_labels;
        e.round_deadline_us = c.round_deadline_us;
        e.rounds = c.rounds;
        for (const std::string& shape : ModelledGpuShapes()) {
          ShapeFill fill;
          fill.shape = shape;
          WP_ASSIGN_OR_RETURN(fill.fill_s, ModelledShapeFillSeconds(shape, in.policy.format, c.chunk_labels,
                                                                    gpu_reserve_bytes, &fill.model_chunk_labels));
          e.fills.push_back(fill);
        }
        e.cpu_s_per_node_wipe = c.expected_labels_cpu_s / in.nodes_per_wave;
        e.node_wipes_per_core_hour = c.verification_node_wipes_per_core_hour;
      }
      row.classes.push_back(std::move(e));
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

}  // namespace wipeproof

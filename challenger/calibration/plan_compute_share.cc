#include "challenger/calibration/plan_compute_share.h"

#include <algorithm>
#include <cmath>

#include "kernels/exclusive_chains.h"

namespace wipeproof {

PlanComputeShare ComputePlanComputeShare(const std::vector<PlanComputeDevices>& devices, uint32_t chunk_labels,
                                         LabelFormat format, double planned_fraction, double fill_s, uint32_t rounds,
                                         double rate_compressions_per_s, uint64_t honest_round_p999_us) {
  PlanComputeShare out;
  uint64_t planned = 0, chunks = 0;
  for (const PlanComputeDevices& d : devices) {
    planned += d.count * d.planned_labels;
    chunks += d.count * (d.chunks + 1);  // a range may start and end inside a chunk
  }
  const auto missing = static_cast<uint64_t>(std::ceil(planned_fraction * static_cast<double>(planned)));
  out.held_labels = planned - std::min(planned, missing);
  const ExclusiveChains chains = ComputeExclusiveChains(chunk_labels);
  const uint64_t nodes = LeastNodesForOutputs(chains, chunks, out.held_labels);
  const auto per_node = static_cast<uint64_t>(SequentialCompressionsPerNode(format));
  out.work_compressions = nodes > UINT64_MAX / per_node ? UINT64_MAX : nodes * per_node;
  out.min_compute_s = static_cast<double>(out.work_compressions) / rate_compressions_per_s;
  out.interval_s = fill_s + static_cast<double>(rounds) * static_cast<double>(honest_round_p999_us) / 1e6;
  out.share = out.interval_s > 0 ? out.min_compute_s / out.interval_s : 0;
  return out;
}

}  // namespace wipeproof

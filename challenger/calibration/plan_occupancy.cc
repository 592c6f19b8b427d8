#include "challenger/calibration/plan_occupancy.h"

#include <cmath>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/session/occupancy_bound.h"

namespace wipeproof {

StatusOr<std::vector<OccupancyPlanRow>> PlanOccupancy(const OccupancyPlanInputs& in) {
  if (in.devices.empty()) return InvalidArgumentError("occupancy plan: no devices");
  if (in.chunk_labels == 0) return InvalidArgumentError("occupancy plan: m is 0");
  if (!(in.confidence > 0 && in.confidence < 1)) return InvalidArgumentError("occupancy plan: confidence not in (0, 1)");
  if (in.short_time_us == 0 || in.window_us == 0) {
    return InvalidArgumentError("occupancy plan: T* and the window must be > 0");
  }
  if (!(std::isfinite(in.verify_compressions_per_s_per_core) && in.verify_compressions_per_s_per_core > 0)) {
    return InvalidArgumentError("occupancy plan: the verify rate must be > 0");
  }
  uint64_t planned = 0;
  for (const PlannedDevice& d : in.devices) planned += d.planned_bytes();
  if (in.shortfall_bytes >= planned) {
    return InvalidArgumentError("occupancy plan: the shortfall " + std::to_string(in.shortfall_bytes) +
                                " bytes is not below the " + std::to_string(planned) + " planned bytes");
  }
  const double chunk_s = VerifyCompressionsPerChunk(in.format, in.chunk_labels) / in.verify_compressions_per_s_per_core;
  std::vector<OccupancyPlanRow> rows;
  const uint32_t devices = static_cast<uint32_t>(in.devices.size());
  for (uint32_t factor = 1; factor <= 64; factor *= 2) {
    OccupancyPlanRow row;
    const std::vector<uint32_t> labels = OccupancyLabelsByBytes(in.devices, in.chunk_labels, devices * factor);
    std::vector<OccupancyDevice> asked;
    for (size_t i = 0; i < labels.size(); ++i) {
      asked.push_back({in.devices[i].planned_bytes(), labels[i]});
      row.labels_per_round += labels[i];
    }
    row.detection = OccupancyDetection(asked, in.shortfall_bytes);
    row.mean_gap_us = OccupancyMeanGapFor(asked, in.shortfall_bytes, in.confidence, in.short_time_us);
    if (row.mean_gap_us > 0) {
      row.rounds_per_hour = 3.6e9 / static_cast<double>(row.mean_gap_us);
      row.chunks_per_node_hour = row.rounds_per_hour * row.labels_per_round;
      row.cpu_s_per_node_hour = row.chunks_per_node_hour * chunk_s;
      row.pool_rounds = OccupancyPoolRounds(in.window_us, std::min(row.mean_gap_us, in.window_us));
      row.challenger_bytes = row.pool_rounds * uint64_t{row.labels_per_round} * 32;
      row.fits = row.mean_gap_us <= in.window_us && row.pool_rounds <= kMaxOccupancyRounds &&
                 row.pool_rounds * uint64_t{row.labels_per_round} <= kMaxLabelsPerSession;
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace wipeproof

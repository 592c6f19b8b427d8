// `plan --occupancy_short_s`'s output (challenger/calibration/plan_occupancy.h): per feasible class,
// the node's planned devices at that class's m, one line per labels per occupancy round: d(b), the
// mean gap that gives the target T*, rounds and checked chunks per node-hour, the challenger's
// CPU-seconds per node-hour and the pool a window holds; and the same as JSON (plan --json's
// "occupancy").
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/calibration/plan_occupancy.h"

namespace wipeproof {

struct OccupancyClassPlan {
  std::string adversary;  // class name
  uint32_t chunk_labels = 0;
  uint64_t planned_bytes = 0;
  uint64_t shortfall_bytes = 0;
  std::vector<OccupancyPlanRow> rows;
};

// Per feasible class of `plan`: its devices (PlanDeviceRow counts expanded) planned at its m, b =
// `shortfall_fraction` of their bytes. Errors: PlanOccupancy's.
StatusOr<std::vector<OccupancyClassPlan>> PlanOccupancyPerClass(const PlanInputs& node, const PlanResult& plan,
                                                                double shortfall_fraction, uint64_t short_time_us,
                                                                uint64_t window_us);

std::string PlanOccupancyTable(const std::vector<OccupancyClassPlan>& plans, double confidence, uint64_t short_time_us,
                               uint64_t window_us);
nlohmann::ordered_json PlanOccupancyJson(const std::vector<OccupancyClassPlan>& plans, double confidence,
                                         uint64_t short_time_us, uint64_t window_us);

}  // namespace wipeproof

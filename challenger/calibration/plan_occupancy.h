// Choosing an occupancy window's rounds, behind `wipeproof-challenger plan --occupancy_short_s`
// (docs/calibration.md "Occupancy windows"): for a node's planned devices, a shortfall b and a
// target T* at confidence c, per number of labels an occupancy round asks, the d(b) it reaches, the
// mean gap that makes T* the target (occupancy_bound.h OccupancyMeanGapFor), and what that costs
// the challenger: rounds and checked chunks per node-hour, CPU-seconds per node-hour (each label is
// one chunk recomputed, VerifyCompressionsPerChunk at the verify rate per core), and the pool and
// memory a window of `window_us` holds (OccupancyPoolRounds rounds, 32 bytes per label).
//
// The trade-off: more labels per round raise d(b), so the same T* allows a longer mean gap (fewer
// rounds, each waking the node and the network), but the chunks per hour, and so the CPU, grow: a
// chunk checked costs o / d(b) per unit of protection, which rises with o. U (rounds in flight, the
// challenger's delays) adds to T* in the verdict; at mean gaps far above the round time it is a
// small share (the table does not include it).
//
// Units: microseconds, bytes, seconds. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "challenger/session/session_plan.h"
#include "common/status.h"
#include "kernels/label_spec.h"

namespace wipeproof {

struct OccupancyPlanInputs {
  std::vector<PlannedDevice> devices;  // planned_bytes(), label_count and labels_per_round are read
  uint32_t chunk_labels = 0;           // m
  LabelFormat format = LabelFormat::kC1;
  double confidence = 0;                          // c, in (0, 1)
  uint64_t shortfall_bytes = 0;                   // b, below the planned bytes
  uint64_t short_time_us = 0;                     // the target T*, > 0
  uint64_t window_us = 0;                         // the window the pool must last, > 0
  double verify_compressions_per_s_per_core = 0;  // the challenger's rate, > 0
};

struct OccupancyPlanRow {
  uint32_t labels_per_round = 0;     // o summed over the devices (OccupancyLabelsByBytes)
  double detection = 0;              // d(b)
  uint64_t mean_gap_us = 0;          // for T* = the target; 0 when no gap reaches it
  double rounds_per_hour = 0;
  double chunks_per_node_hour = 0;
  double cpu_s_per_node_hour = 0;
  uint64_t pool_rounds = 0;          // for the window
  uint64_t challenger_bytes = 0;     // expected labels the pool holds, 32 bytes each
  bool fits = false;                 // mean gap >= 1 us, within the window, the pool within its limits
};

// One row per labels per round in {D, 2D, 4D, ..., 64D} for D devices.
// Errors: INVALID_ARGUMENT for no devices, m = 0, c outside (0, 1), b not below the planned bytes,
// T* or the window 0, a rate not finite and > 0.
StatusOr<std::vector<OccupancyPlanRow>> PlanOccupancy(const OccupancyPlanInputs& in);

}  // namespace wipeproof

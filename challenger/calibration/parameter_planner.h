// The offline fleet calculator behind `wipeproof-challenger plan`: from a node's shape (devices,
// memory, fill rates), the honest round time, the adversary classes and the detection target, what
// each class costs: m, R, labels per round per device, deadlines, how long a wipe takes per node
// and per wave, and how much challenger CPU the expected labels need. Nothing is measured on a
// node; the same rule as `calibrate` (calibration_rule.h) turns the inputs into parameters, so a
// plan is what calibrate would produce for those measurements.
//
// Sampling is sized as calibrate sizes it (calibration_rule.h step 2): N checked chunks over the
// whole node, each device its share, so the node statement meets the target fraction.
// Models (docs/calibration.md "`wipeproof-challenger plan`"):
//   fill time of a device at m = planned bytes / (rate at m_ref * npl(m_ref) / npl(m)), with npl(m)
//     the graph's nodes hashed per output (kernels/graph_metrics.h): labels cost more at larger m;
//     the devices of a node fill concurrently, so the node's fill is its slowest device's;
//   expected labels = one chunk recompute per checked chunk (the proof rounds' expected distinct
//     chunks, plus the holding pool: session_plan.h kHoldingBatches batches of q/8 per device),
//     nodes_hashed(m) * c_verify compressions each (c_verify 1 for c1; 2 plus the uncached block-0
//     share for 192), at the challenger's measured verify rate per core, over its cores, for every
//     node of the wave; all computed before the order (serve prepares a wave's next run while it
//     waits for it; a warning when they take longer than the wave run itself);
//   verification throughput = node wipes per hour per challenger core = 3600 s / (expected-label
//     CPU seconds per node);
//   challenger cores for a fleet of F nodes, each wiped once per period P seconds (plan
//     --fleet_nodes --period_s): node wipes per hour W = F * 3600 / P; cores = ceil(W / verification
//     throughput); utilisation = W / (cores * throughput) (ChallengerCoresForFleet);
//   node wipe = fill + R * round deadline (an upper bound: rounds usually take the honest round
//     time); a wave's nodes run concurrently.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "challenger/calibration/calibration_rule.h"
#include "challenger/calibration/node_profile_claims.h"
#include "challenger/calibration/plan_compute_share.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"

namespace wipeproof {

struct PlanDeviceSpec {
  std::string model;                    // e.g. "NVIDIA H200", "host-dram"
  uint32_t count = 1;                   // devices of this kind on the node
  uint64_t capacity_bytes = 0;          // declared, per device
  uint64_t reserve_bytes = 0;           // allowed reserve, per device
  double fill_bytes_per_s = 0;          // per device, at fill_rate_chunk_labels
  uint32_t fill_rate_chunk_labels = 0;  // m the rate was measured at; 0 = PlanInputs::fill_rate_chunk_labels
};

struct PlanInputs {
  std::vector<PlanDeviceSpec> devices;      // one node
  uint32_t fill_rate_chunk_labels = 16384;  // m the fill rates were measured at
  uint64_t honest_round_p999_us = 200;      // round time p99.9 on the challenger's clock
  CalibrationPolicy policy;                 // format, margin, slack, f, confidence, q, caps (its
                                            // adversary is ignored: see `classes`)
  std::vector<AdversaryClass> classes;      // one plan per class
  uint32_t nodes_per_wave = 1;
  int challenger_cores = 1;
  double verify_compressions_per_s_per_core = 0;  // the challenger's RecomputeChunk rate
  uint64_t fleet_nodes = 0;                       // the fleet, for the cores it needs (0: not asked)
  double period_s = 0;                            // each node wiped once per period_s (> 0 with fleet_nodes)
  std::optional<Profile> profile;                 // when set: m, R, q, deadlines and class come from it
  // The node's fastest declared label rate, compressions/s (plan --compute_rate): each class's
  // compute share (plan_compute_share.h); 0: not asked.
  double compute_compressions_per_s = 0;
};

struct PlanDeviceRow {
  std::string model;
  uint32_t count = 0;
  uint64_t capacity_bytes = 0;
  uint64_t planned_bytes = 0;  // per device: whole chunks of m
  uint64_t chunks = 0;         // per device
  uint32_t labels_per_round = 0;
  double expected_distinct = 0;
  double detection_probability = 0;  // diagnostic: at the target fraction, this device alone
  double fill_s = 0;                 // estimated, per device
};

// The challenger cores a fleet needs for its expected labels (ChallengerCoresForFleet).
struct FleetCores {
  uint64_t fleet_nodes = 0;
  double period_s = 0;
  double node_wipes_per_hour = 0;  // fleet_nodes * 3600 / period_s
  uint64_t cores = 0;              // ceil(node_wipes_per_hour / per-core throughput)
  double utilisation = 0;          // node_wipes_per_hour / (cores * per-core throughput), in (0, 1]
};

// Errors: INVALID_ARGUMENT when fleet_nodes is 0, or period_s or node_wipes_per_core_hour is not
// finite and > 0.
StatusOr<FleetCores> ChallengerCoresForFleet(uint64_t fleet_nodes, double period_s, double node_wipes_per_core_hour);

struct ClassPlan {
  AdversaryClass adversary;
  bool feasible = false;
  std::string refusal;  // why not, when !feasible
  uint32_t chunk_labels = 0;
  uint64_t round_deadline_us = 0;
  double recompute_floor_us = 0;
  bool rule_satisfied = false;
  uint64_t chunks_needed = 0;  // N, over the whole node
  uint32_t rounds = 0;         // R
  // The node statement (bound.h) with the expected distinct chunks, as a fraction of the node's
  // planned bytes at the policy's confidence, and whether it is within the target fraction.
  double planned_fraction = 0;
  bool reaches_target = false;
  std::vector<PlanDeviceRow> devices;
  double fill_s = 0;                                 // node: slowest device
  double fill_deadline_s = 0;                        // fill * (1 + slack), or the profile's
  double rounds_s = 0;                               // R * round deadline
  double expected_labels_cpu_s = 0;                  // whole wave, CPU seconds
  double expected_labels_wall_s = 0;                 // over the challenger's cores
  double verification_node_wipes_per_core_hour = 0;  // node wipes one challenger core verifies per hour
  std::optional<FleetCores> fleet;                   // with PlanInputs::fleet_nodes > 0
  bool precompute_keeps_up = true;                   // expected labels within one wave run's time
  double node_wipe_s = 0;
  double wave_wipe_s = 0;
  std::optional<PlanComputeShare> compute;  // with PlanInputs::compute_compressions_per_s > 0
  std::vector<std::string> warnings;
};

struct PlanResult {
  std::vector<ClassPlan> classes;
};

// Errors: INVALID_ARGUMENT for inputs out of range (no devices, a rate <= 0 or not finite, an
// honest p99.9 above kMaxHonestRoundP999Us, bad policy).
// A class that no m fits is returned with feasible = false and the refusal text.
StatusOr<PlanResult> ComputeFleetPlan(const PlanInputs& inputs);

// A node's shape read from its signed profile (bench --what=all), for `plan --node_profile`.
struct NodeProfilePlanShape {
  std::vector<PlanDeviceSpec> devices;   // GPUs grouped by name and size, then the host
  double slowest_lookup_p999_us = 0;     // the largest device lookup p99.9 the node measured
  double sequential_compression_ps = 0;  // fastest the node measured (host core or GPU step); 0: none;
                                         // any positive value (0.5 ps too) is a measurement
  std::string sequential_where;
  std::vector<std::string> notes;  // devices left out and why
};
// Devices with at least one fill figure in `format` become PlanDeviceSpecs: capacity = the
// device's total_bytes (host: `host_capacity_bytes` when > 0), reserve = `gpu_reserve_bytes` or
// `host_reserve_bytes`, fill rate = the figure at the largest m measured (the slowest per label on
// a CPU; a group of equal GPUs takes its slowest member's). The host is left out when
// `include_host` is false. Errors: INVALID_ARGUMENT when no device is left (with the reasons).
StatusOr<NodeProfilePlanShape> PlanShapeFromNodeProfile(const NodeProfile& profile, LabelFormat format,
                                                        uint64_t gpu_reserve_bytes, bool include_host,
                                                        uint64_t host_capacity_bytes, uint64_t host_reserve_bytes);

// Pieces, for plots and tests. `fill_rate_chunk_labels` applies when the device has none of its own.
double FillSecondsAt(const PlanDeviceSpec& device, uint32_t fill_rate_chunk_labels, uint32_t chunk_labels);
double VerifyCompressionsPerChunk(LabelFormat format, uint32_t chunk_labels);
// Wipe time of one node at m with R rounds and the given deadline (expected labels prepared ahead).
double NodeWipeSecondsAt(const PlanInputs& inputs, uint32_t chunk_labels, uint32_t rounds, uint64_t round_deadline_us);

}  // namespace wipeproof

// The compute share `plan --compute_rate` shows per adversary class: how much of an honest wipe the
// compute statement (challenger/session/compute_statement.h) can prove the node's whole compute
// spent on its fill, at the node's fastest declared label rate R (the inventory's
// cpu_compressions_per_s plus its devices' label_rates). So the kernels' efficiency shows up as
// proof strength: the closer the honest fill runs to R, the larger the share.
//
// Model (the statement's own rule with the plan's figures): held labels H = the planned labels less
// the class's expected bound (planned_fraction of them, rounded up); work W = the H shortest
// exclusive chains over the node's chunks (kernels/exclusive_chains.h; each device's chunks plus
// one, as the statement counts them) times the format's compressions per node; least compute time
// W / R; the interval from the order to the last proof round = the node's modelled fill + R rounds
// at the honest p99.9; share = W / R over that interval (no ingress: a node declared isolated).
//
// Units: labels, compressions, seconds. Thread-safety: pure functions (the chains are computed per
// call: ~0.1 s at m = 2^17).
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/label_spec.h"

namespace wipeproof {

struct PlanComputeShare {
  uint64_t held_labels = 0;
  uint64_t work_compressions = 0;
  double min_compute_s = 0;
  double interval_s = 0;
  double share = 0;  // min_compute_s / interval_s
};

// One kind of device of the node: how many, and each one's planned labels and whole chunks.
struct PlanComputeDevices {
  uint64_t count = 0;
  uint64_t planned_labels = 0;
  uint64_t chunks = 0;
};

// For a class at m = `chunk_labels` whose expected bound is `planned_fraction` of the planned
// bytes, whose node fills in `fill_s` and runs `rounds` proof rounds at `honest_round_p999_us`.
// REQUIRES: 1 <= chunk_labels <= kMaxChunkLabels, rate_compressions_per_s > 0.
PlanComputeShare ComputePlanComputeShare(const std::vector<PlanComputeDevices>& devices, uint32_t chunk_labels,
                                         LabelFormat format, double planned_fraction, double fill_s, uint32_t rounds,
                                         double rate_compressions_per_s, uint64_t honest_round_p999_us);

}  // namespace wipeproof

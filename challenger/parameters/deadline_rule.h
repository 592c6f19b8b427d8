// The deadline rule (docs/calibration.md "The rule"): a round deadline rules out an adversary
// class only if recomputing one discarded label takes that class longer than the deadline.
//
//   recompute floor = depth(m) * c_node * t_min / safety,   depth(m) = 1.5 * m
//
// with c_node sequential compressions per graph node (1 for posedb-blake3-c1, 2 for
// posedb-blake3-192; kernels/label_spec.h) and t_min the fastest sequential time of one
// compression the class must rule out. The rule holds iff round deadline <= floor. depth(m) = 1.5*m
// is the measured minimum output depth for powers of two (label-spec.md §3), so profiles use
// power-of-two m (parameter_profile.h checks it).
//
// The brief's second condition (deadline above the honest p99.9 round time with margin) is about
// liveness, not soundness: an honest node that is too slow fails its rounds, it never passes wrongly.
// It does not decide DeadlineRuleResult::satisfied, but a verdict states a bound only when it holds
// too, with margin kHonestRoundMargin (verdict.h): a profile whose honest round time was never
// measured, or whose deadline leaves honest nodes no room, is not a calibrated one.
//
// Units: picoseconds for t_min and the floor (exact for every m <= 2^20 and t_min < 2^32 ps),
// microseconds for deadlines. Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/label_spec.h"

namespace wipeproof {

// 1.5 * m * c_node * t_min_ps / safety_factor, in picoseconds.
// REQUIRES: safety_factor >= 1.
double RecomputeFloorPs(uint32_t chunk_labels, LabelFormat format, uint64_t t_min_ps, double safety_factor);

struct DeadlineRuleResult {
  double floor_ps = 0;    // recompute floor, picoseconds
  uint64_t floor_us = 0;  // the same, rounded down to whole microseconds (for ParameterProfile)
  uint64_t round_deadline_us = 0;
  bool satisfied = false;  // round_deadline_us * 1e6 <= floor_ps
  // "round deadline 400 us <= recompute floor 491.52 us for class commodity-cpu" or "... > ...".
  std::string explanation;
};

DeadlineRuleResult CheckDeadlineRule(uint32_t chunk_labels, LabelFormat format, uint64_t t_min_ps, double safety_factor,
                                     uint64_t round_deadline_us, const std::string& adversary_class);

// True when an honest p99.9 round time was measured (> 0) and the deadline exceeds it by at least
// `margin` (a factor, e.g. 1.2). False when it was not measured.
bool HonestMarginMet(uint64_t round_deadline_us, uint64_t honest_round_p999_us, double margin);

// The margin a verdict requires before it states a bound: round deadline >= 1.2 * honest p99.9.
// (`calibrate` with --margin m sets deadline = p99.9 * (1 + m), so m >= 0.2 meets it.)
inline constexpr double kHonestRoundMargin = 1.2;

}  // namespace wipeproof

// Calibration: from measurements to a parameter profile (docs/calibration.md; issue "Benchmark
// mode and calibration"). Pure functions; the sessions that measure are in calibration_session.h.
//
// The principle: the authority's constants (adversary class t_min and safety factor, margin,
// slack, target fraction, confidence, caps) set the security; measurements of the node only
// make parameters stricter, never looser.
//
//   1. Round deadline and m. deadline = ceil(p99.9 honest round time * (1 + margin)), the
//      honest round time measured on the challenger's monotonic clock over the real path. m is the
//      smallest power of two with
//          1.5 * m * c_node * t_min / safety >= deadline          (deadline_rule.h)
//      and m <= the authority's cap (default 2^20). None: refuse, saying why. A node that slows its
//      rounds during calibration only raises m (a slower fill for it), never the ratio of deadline
//      to recompute floor, which the rule bounds by 1.
//   2. Sampling, sized for the statement the verdict makes: the node's planned memory taken
//      together (challenger/session/bound.h). N = ceil(ln(1 - confidence) / ln(1 - f)) distinct
//      chunks *over all the node's devices*, each device's share in proportion to its chunks
//      (n_d = ceil(N * C_d / sum C)): with checks spread in proportion to the bytes the joint bound
//      is (sum P)(1 - (1 - c)^(1 / sum N_d)) <= f (sum P), and no other spread does better. R is the
//      smallest number of rounds in which every device reaches its share in expectation at q per
//      round (rounds draw distinct chunks within a round, independently across rounds:
//      C (1 - (1 - q/C)^R) >= n_d), at most kMaxProfileRounds; per device the smallest q_d <= q
//      that does. The planned statement is then the joint bound with the expected distinct counts
//      (SamplingPlan::planned_fraction); when it exceeds f (too few chunks in all, e.g. 8 chunks at
//      m = 2^19 bound 57.8% at 99.9%) calibration refuses, saying why and what would help.
//   3. Fill deadline = ceil(basis * (1 + slack)), basis = the fill time measured by the challenger
//      (order sent to report received, at the chosen m), or the node's own claim from its signed
//      profile when that is *shorter*. Never from node claims alone, never longer than measured.
//      It keeps a margin over the measured honest fill: refused when the deadline is below
//      (1 + kFillDeadlineMargin) x the measured fill (the node's claim is too optimistic for what it
//      did; slack is at least kFillDeadlineMargin, so a deadline from the measurement alone always
//      keeps it) or above the authority's cap. The profile records the measured fill
//      (honest_fill_us) so the margin can be checked (parameter_profile.h).
//   4. Node claims that cannot tighten anything are reported: a class t_min above the node's own
//      sequential compression time is a warning (the class does not rule out this node's own
//      hardware); a device the node reports larger than declared is a warning.
//
// Units: microseconds for times, picoseconds for t_min, bytes, labels, chunks as named.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "challenger/parameters/deadline_rule.h"
#include "challenger/parameters/parameter_profile.h"
#include "common/status.h"
#include "kernels/label_spec.h"

namespace wipeproof {

// Sane maxima of the authority's knobs and of a measured honest round time: beyond them a figure
// is a typo or an attack, and the products below would leave uint64 (a deadline wrapping to 1 us).
inline constexpr double kMaxRoundMargin = 100;                  // deadline <= 101 x p99.9
inline constexpr double kMaxFillSlack = 100;                    // fill deadline <= 101 x fill
inline constexpr uint64_t kMaxHonestRoundP999Us = 1'000'000'000;  // 1000 s
inline constexpr double kMinTargetFraction = 1e-9;              // keeps N below 2^35
inline constexpr double kMaxConfidence = 1 - 1e-12;

// ceil(x * factor) for factor >= 0, with the rule's 1e-9 tolerance. Errors: INVALID_ARGUMENT when
// the factor is not finite or negative, or the result does not fit in uint64 (never a wrapped or
// saturated value: a deadline must not silently shrink or grow).
StatusOr<uint64_t> CeilScaled(uint64_t x, double factor);
// round_deadline_us >= kHonestRoundMargin * honest_p999_us (deadline_rule.h), computed without
// overflow: what a calibrated profile's deadline must meet.
bool MeetsHonestRoundMargin(uint64_t round_deadline_us, uint64_t honest_p999_us);
// fill_deadline_us >= (1 + kFillDeadlineMargin) * honest_fill_us (parameter_profile.h), computed
// without overflow: what a calibrated fill deadline must keep over the measured fill.
bool MeetsFillMargin(uint64_t fill_deadline_us, uint64_t honest_fill_us);
// Picoseconds for messages: whole above 100 ps, else up to 3 decimals ("0.5").
std::string FormatPicoseconds(double ps);

// Order statistics of round times, microseconds, challenger's monotonic clock. Percentiles are
// nearest-rank: the smallest sample with at least p of all samples at or below it.
struct RoundTimeStats {
  size_t count = 0;
  uint64_t min_us = 0, p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  double mean_us = 0;
  double stddev_us = 0;    // jitter as the standard deviation
  uint64_t jitter_us = 0;  // jitter as p99 - p50
};
// REQUIRES: !elapsed_us.empty().
RoundTimeStats SummarizeRoundTimes(std::vector<uint64_t> elapsed_us);

// The authority's choices for one calibration.
struct CalibrationPolicy {
  AdversaryClass adversary;                               // t_min, safety factor (adversary_classes.h)
  LabelFormat format = LabelFormat::kC1;                  // c_node
  double round_margin = 1.0;                              // deadline = p99.9 * (1 + margin); in
                                                          // [0.2 (kHonestRoundMargin - 1: verdicts
                                                          // need it), kMaxRoundMargin]
  double fill_slack = 0.5;                                // fill deadline = fill * (1 + slack); in
                                                          // [kFillDeadlineMargin, kMaxFillSlack]
  double target_fraction = 0.01;                          // f: hidden fraction to detect,
                                                          // [kMinTargetFraction, 1)
  double confidence = 0.999;                              // confidence of the node statement at
                                                          // f, (0, kMaxConfidence]
  uint32_t labels_per_round = 64;                         // q: most labels per device per round
  uint32_t max_chunk_labels = kMaxChunkLabels;  // cap on m, a power of two <= 2^20
  uint64_t max_fill_deadline_us = 0;                      // cap on the fill deadline; 0 = none
  // Cap on the round deadline, microseconds; 0 = none. The deadline is also the reach of a
  // relocation: labels kept on any machine within that round trip answer in time, so the wave and
  // storage declarations (wave-complete, no-nvme-in-reach) must cover every memory that near. A
  // node (or its network) slow only while calibrated would widen that reach; this refuses it.
  uint64_t max_round_deadline_us = 0;
  uint64_t order_ttl_us = 300'000'000;                    // copied into the profile
};
// Errors: INVALID_ARGUMENT naming the field.
Status ValidatePolicy(const CalibrationPolicy& policy);

// What a node claims in its signed profile (node_profile_claims.h), reduced to what the rule
// uses. 0 = not claimed.
struct NodeClaims {
  uint64_t fill_estimate_us = 0;           // its fill of this plan at the chosen m, by its own benchmark
  double sequential_compression_ps = 0;    // fastest sequential compression it measured; any
                                           // positive value is a measurement (0.5 ps included)
  std::string sequential_where;            // "host core", "GPU-..." (for the warning)
  std::vector<std::string> notes;          // warnings found while reducing the profile
};

// Step 1: the deadline and m for an honest p99.9 round time.
struct RoundRule {
  uint64_t honest_p999_us = 0;
  uint64_t round_deadline_us = 0;
  uint32_t chunk_labels = 0;  // m
  DeadlineRuleResult rule;    // at m: satisfied
};
// Errors: INVALID_ARGUMENT (p99.9 of 0 or above kMaxHonestRoundP999Us, bad policy, a deadline
// overflow); FAILED_PRECONDITION when the deadline is above policy.max_round_deadline_us (naming
// the cap), or when no power-of-two m up to policy.max_chunk_labels satisfies the rule, saying
// what the largest m allows and what it would take (a smaller margin, a closer challenger, a
// slower class).
StatusOr<RoundRule> ChooseRoundRule(uint64_t honest_p999_us, const CalibrationPolicy& policy);

// Step 2.
// Chunks a node must have checked, spread over its devices in proportion to their chunks, so the
// joint statement bounds the unwiped part of its planned memory by f at confidence c (and so a
// hidden fraction f is caught with probability c): ceil(ln(1-c) / ln(1-f)).
// REQUIRES: 0 < f < 1, 0 < c < 1.
uint64_t ChunksForDetection(double target_fraction, double confidence);
// Expected distinct chunks after `rounds` rounds of q distinct chunks each out of `chunks`:
// chunks * (1 - (1 - q/chunks)^rounds).
double ExpectedDistinctChunks(uint64_t chunks, uint32_t q, uint32_t rounds);
// 1 - (1 - f)^n: the chance that n distinct uniformly drawn chunks include a missing one when a
// fraction f of the chunks is missing (with replacement: a lower bound for distinct draws).
double DetectionProbability(double hidden_fraction, double checked_chunks);

struct DeviceSampling {
  uint64_t chunks = 0;               // whole chunks of m planned on the device
  uint64_t share = 0;                // n_d = ceil(N * chunks / all chunks), at most `chunks`
  uint32_t labels_per_round = 0;     // q_d
  double expected_distinct = 0;      // chunks checked over all rounds, expected
  double detection_probability = 0;  // diagnostic: a fraction f of this device alone hidden is caught
                                     // with this probability (1 - (1-f)^expected_distinct)
  bool reaches_share = false;        // expected_distinct >= share
};
struct SamplingPlan {
  uint64_t chunks_needed = 0;  // N, over all devices of the node
  uint32_t rounds = 0;         // R
  std::vector<DeviceSampling> devices;
  // The node statement's bound on the unwiped part of the planned bytes, as a fraction of them, at
  // the policy's confidence with the expected distinct counts (bound.h JointMissingFraction).
  double planned_fraction = 0;
  bool reaches_target = false;  // planned_fraction <= target fraction
};
// `device_chunks`: per planned device, its chunks at the chosen m (each >= 1).
// Errors: INVALID_ARGUMENT (no devices, a device without chunks, bad policy).
StatusOr<SamplingPlan> ChooseSampling(const std::vector<uint64_t>& device_chunks, const CalibrationPolicy& policy);

// Step 3.
struct FillRule {
  uint64_t measured_fill_us = 0;  // challenger's clock, at the chosen m
  uint64_t node_claim_us = 0;     // 0: none
  uint64_t basis_us = 0;          // min(measured, claim when given)
  uint64_t fill_deadline_us = 0;  // ceil(basis * (1 + slack))
};
// Errors: INVALID_ARGUMENT (measured 0, deadline overflow); FAILED_PRECONDITION when the deadline is
// below (1 + kFillDeadlineMargin) x measured (the node's claim is too optimistic for what it did) or
// above policy.max_fill_deadline_us.
StatusOr<FillRule> ChooseFillDeadline(uint64_t measured_fill_us, uint64_t node_claim_us,
                                      const CalibrationPolicy& policy);

// Everything calibrate measured, for the whole derivation.
struct CalibrationInputs {
  std::string profile_name;
  RoundTimeStats rounds;                   // honest rounds (probe session)
  uint64_t measured_fill_us = 0;           // fill at the chosen m (fill session)
  std::vector<uint64_t> device_labels;     // per planned device: floor((capacity - reserve) / 32)
  std::vector<std::string> device_models;  // per planned device (labels_per_round_by_model)
  NodeClaims claims;                       // from the node's signed profile; empty without one
  int64_t calibrated_at_unix_us = 0;
};

struct CalibrationResult {
  Profile profile;  // calibrated: true, meets the rule for policy.adversary
  RoundRule round;
  SamplingPlan sampling;
  FillRule fill;
  std::vector<std::string> warnings;
};
// Steps 1-4. Errors: as the steps (FAILED_PRECONDITION: refused, with the reason: also when the
// class's safety factor is below kMinStatedSafetyFactor, or the planned statement misses the target
// fraction, since verdicts under such a profile could not state the bound it was asked for);
// INTERNAL when the derived round deadline is below kHonestRoundMargin x the honest p99.9 (a profile
// marked calibrated never carries such a deadline).
StatusOr<CalibrationResult> DeriveCalibratedProfile(const CalibrationInputs& inputs, const CalibrationPolicy& policy);

}  // namespace wipeproof

#include "challenger/calibration/calibration_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "challenger/session/bound.h"
#include "common/numbers.h"

namespace wipeproof {

namespace {

std::string Micros(double us) {
  std::string s = FormatFixed(us, 2);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s + " us";
}

}  // namespace

StatusOr<uint64_t> CeilScaled(uint64_t x, double factor) {
  if (!std::isfinite(factor) || factor < 0) {
    return InvalidArgumentError("scale factor " + FormatFixed(factor, 3) + " is not a finite number >= 0");
  }
  const double y = std::ceil(static_cast<double>(x) * factor - 1e-9);
  // 2^64 is exactly representable; every double below it converts without overflow.
  if (!(y < 18446744073709551616.0)) {
    return InvalidArgumentError(std::to_string(x) + " x " + FormatFixed(factor, 3) + " does not fit in 64 bits");
  }
  return y <= 0 ? uint64_t{0} : static_cast<uint64_t>(y);
}

bool MeetsFillMargin(uint64_t fill_deadline_us, uint64_t honest_fill_us) {
  return static_cast<long double>(fill_deadline_us) >=
         (1.0L + static_cast<long double>(kFillDeadlineMargin)) * static_cast<long double>(honest_fill_us) - 1e-6L;
}

bool MeetsHonestRoundMargin(uint64_t round_deadline_us, uint64_t honest_p999_us) {
  return static_cast<long double>(round_deadline_us) >=
         static_cast<long double>(kHonestRoundMargin) * static_cast<long double>(honest_p999_us) - 1e-6L;
}

std::string FormatPicoseconds(double ps) {
  if (ps >= 100 || ps == std::floor(ps)) return FormatFixed(std::floor(ps), 0);
  std::string s = FormatFixed(ps, 3);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

RoundTimeStats SummarizeRoundTimes(std::vector<uint64_t> elapsed_us) {
  RoundTimeStats s;
  if (elapsed_us.empty()) return s;
  std::sort(elapsed_us.begin(), elapsed_us.end());
  s.count = elapsed_us.size();
  s.min_us = elapsed_us.front();
  s.max_us = elapsed_us.back();
  s.p50_us = NearestRankPercentile(elapsed_us, 0.50);
  s.p90_us = NearestRankPercentile(elapsed_us, 0.90);
  s.p99_us = NearestRankPercentile(elapsed_us, 0.99);
  s.p999_us = NearestRankPercentile(elapsed_us, 0.999);
  double sum = 0;
  for (uint64_t x : elapsed_us) sum += static_cast<double>(x);
  s.mean_us = sum / static_cast<double>(s.count);
  double var = 0;
  for (uint64_t x : elapsed_us) var += (static_cast<double>(x) - s.mean_us) * (static_cast<double>(x) - s.mean_us);
  s.stddev_us = std::sqrt(var / static_cast<double>(s.count));
  s.jitter_us = s.p99_us - s.p50_us;
  return s;
}

Status ValidatePolicy(const CalibrationPolicy& p) {
  if (p.adversary.name.empty()) return InvalidArgumentError("adversary class: empty name");
  if (p.adversary.t_min_ps < 1) return InvalidArgumentError("adversary class " + p.adversary.name + ": t_min_ps < 1");
  if (!(p.adversary.safety_factor >= 1) || !std::isfinite(p.adversary.safety_factor)) {
    return InvalidArgumentError("adversary class " + p.adversary.name + ": safety factor must be >= 1");
  }
  // A verdict states a bound only when deadline >= kHonestRoundMargin * p99.9 (verdict.h).
  if (!(p.round_margin >= kHonestRoundMargin - 1 - 1e-12) || !std::isfinite(p.round_margin)) {
    return InvalidArgumentError("margin must be >= " + FormatFixed(kHonestRoundMargin - 1, 1) +
                                ": verdicts state a bound only when the round deadline is at least " +
                                FormatFixed(kHonestRoundMargin, 1) + " x the honest p99.9");
  }
  if (!(p.round_margin <= kMaxRoundMargin)) {
    return InvalidArgumentError("margin must be <= " + FormatFixed(kMaxRoundMargin, 0));
  }
  if (!(p.fill_slack >= kFillDeadlineMargin - 1e-12 && p.fill_slack <= kMaxFillSlack)) {
    return InvalidArgumentError("fill slack must be in [" + FormatFixed(kFillDeadlineMargin, 1) + ", " +
                                FormatFixed(kMaxFillSlack, 0) + "]: the fill deadline keeps a margin of " +
                                FormatFixed(kFillDeadlineMargin, 1) + " x the measured honest fill");
  }
  if (!(p.target_fraction >= kMinTargetFraction && p.target_fraction < 1)) {
    return InvalidArgumentError("target fraction must be in [1e-9, 1)");
  }
  if (!(p.confidence > 0 && p.confidence <= kMaxConfidence)) {
    return InvalidArgumentError("confidence must be in (0, 1 - 1e-12]");
  }
  if (p.labels_per_round < 1) return InvalidArgumentError("labels per round must be >= 1");
  if (!IsPowerOfTwo(p.max_chunk_labels) || p.max_chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("max chunk labels must be a power of two <= 2^20, got " +
                                std::to_string(p.max_chunk_labels));
  }
  if (p.order_ttl_us < 1'000'000) return InvalidArgumentError("order TTL must be >= 1 s");
  return Status::Ok();
}

StatusOr<RoundRule> ChooseRoundRule(uint64_t honest_p999_us, const CalibrationPolicy& policy) {
  WP_RETURN_IF_ERROR(ValidatePolicy(policy));
  if (honest_p999_us == 0) return InvalidArgumentError("honest p99.9 round time is 0: nothing was measured");
  if (honest_p999_us > kMaxHonestRoundP999Us) {
    return InvalidArgumentError("honest p99.9 round time " + std::to_string(honest_p999_us) + " us is above " +
                                std::to_string(kMaxHonestRoundP999Us) + " us (1000 s): not a round time");
  }
  RoundRule r;
  r.honest_p999_us = honest_p999_us;
  WP_ASSIGN_OR_RETURN(const uint64_t deadline, CeilScaled(honest_p999_us, 1.0 + policy.round_margin));
  r.round_deadline_us = std::max<uint64_t>(1, deadline);
  if (policy.max_round_deadline_us > 0 && r.round_deadline_us > policy.max_round_deadline_us) {
    return FailedPreconditionError(
        "round deadline " + std::to_string(r.round_deadline_us) + " us (the honest p99.9 " +
        std::to_string(honest_p999_us) + " us * (1 + margin " + FormatFixed(policy.round_margin, 2) +
        ")) is above the authority's cap " + std::to_string(policy.max_round_deadline_us) +
        " us (--max_round_deadline_us): labels kept on any machine within that round trip would answer in time, "
        "a reach the wave and storage declarations do not cover. Calibrate over the real path when it is not "
        "loaded, or find what slows the node's rounds");
  }
  const AdversaryClass& a = policy.adversary;
  for (uint32_t m = 1; m <= policy.max_chunk_labels; m *= 2) {
    DeadlineRuleResult rule =
        CheckDeadlineRule(m, policy.format, a.t_min_ps, a.safety_factor, r.round_deadline_us, a.name);
    if (rule.satisfied) {
      r.chunk_labels = m;
      r.rule = rule;
      return r;
    }
    if (m == policy.max_chunk_labels) break;
  }
  const double largest_floor_us =
      RecomputeFloorPs(policy.max_chunk_labels, policy.format, a.t_min_ps, a.safety_factor) / 1e6;
  // The honest p99.9 the largest m would still allow with this margin.
  const double allowed_p999_us = largest_floor_us / (1.0 + policy.round_margin);
  return FailedPreconditionError(
      "no m up to 2^" + std::to_string(FloorLog2(policy.max_chunk_labels)) + " satisfies the deadline rule for class " +
      a.name + " (t_min " + std::to_string(a.t_min_ps) + " ps, safety " + FormatFixed(a.safety_factor, 2) + ", " +
      LabelFormatName(policy.format) + "): the honest p99.9 round time " + std::to_string(honest_p999_us) +
      " us * (1 + margin " + FormatFixed(policy.round_margin, 2) + ") = deadline " +
      std::to_string(r.round_deadline_us) + " us, above the recompute floor " + Micros(largest_floor_us) +
      " at m = 2^" + std::to_string(FloorLog2(policy.max_chunk_labels)) +
      ". A prover could recompute a discarded label within that " + "deadline. It takes an honest p99.9 of at most " +
      Micros(allowed_p999_us) +
      ": move the challenger closer to the node, use a smaller margin, or the 192 format (c_node 2)");
}

uint64_t ChunksForDetection(double target_fraction, double confidence) {
  const double n = std::log1p(-confidence) / std::log1p(-target_fraction);
  // Saturates (a target far below kMinTargetFraction would need more than 2^64 chunks).
  if (!(n < 1.8e19)) return UINT64_MAX;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(n - 1e-9)));
}

double ExpectedDistinctChunks(uint64_t chunks, uint32_t q, uint32_t rounds) {
  if (chunks == 0) return 0;
  if (q >= chunks) return static_cast<double>(chunks);
  const double miss = std::pow(1.0 - static_cast<double>(q) / static_cast<double>(chunks), rounds);
  return static_cast<double>(chunks) * (1.0 - miss);
}

double DetectionProbability(double hidden_fraction, double checked_chunks) {
  if (hidden_fraction <= 0) return 0;
  if (hidden_fraction >= 1) return 1;
  return -std::expm1(checked_chunks * std::log1p(-hidden_fraction));
}

StatusOr<SamplingPlan> ChooseSampling(const std::vector<uint64_t>& device_chunks, const CalibrationPolicy& policy) {
  WP_RETURN_IF_ERROR(ValidatePolicy(policy));
  if (device_chunks.empty()) return InvalidArgumentError("no devices to sample");
  SamplingPlan plan;
  plan.chunks_needed = ChunksForDetection(policy.target_fraction, policy.confidence);
  double all_chunks = 0;
  for (size_t i = 0; i < device_chunks.size(); ++i) {
    if (device_chunks[i] == 0) return InvalidArgumentError("device " + std::to_string(i) + " holds no whole chunk");
    all_chunks += static_cast<double>(device_chunks[i]);
  }
  const uint64_t q = policy.labels_per_round;
  // Shares in proportion to the chunks, and R: the most rounds any device needs to reach its share
  // at q per round in expectation: C (1 - (1 - q/C)^R) >= n  <=>  R >= ln(1 - n/C) / ln(1 - q/C).
  uint64_t rounds = 1;
  for (uint64_t chunks : device_chunks) {
    DeviceSampling d;
    d.chunks = chunks;
    const double share = static_cast<double>(plan.chunks_needed) * static_cast<double>(chunks) / all_chunks;
    d.share = std::min<uint64_t>(chunks, share < 1.8e19 ? static_cast<uint64_t>(std::ceil(share - 1e-9)) : chunks);
    d.share = std::max<uint64_t>(d.share, 1);
    plan.devices.push_back(d);
    if (q >= chunks) continue;  // every chunk every round: one round reaches any share
    const double c = static_cast<double>(chunks);
    // A share of every chunk is only reached in the limit: aim within half a chunk of it.
    const double want = d.share >= chunks ? c - 0.5 : static_cast<double>(d.share);
    const double r = std::log1p(-want / c) / std::log1p(-static_cast<double>(q) / c);
    rounds = std::max<uint64_t>(rounds, r < 1.8e19 ? static_cast<uint64_t>(std::ceil(r - 1e-9)) : UINT64_MAX);
  }
  plan.rounds = static_cast<uint32_t>(std::min<uint64_t>(rounds, kMaxProfileRounds));
  std::vector<uint64_t> planned;
  std::vector<double> expected;
  for (DeviceSampling& d : plan.devices) {
    const uint32_t cap = static_cast<uint32_t>(std::min<uint64_t>(q, d.chunks));
    // Smallest q_d reaching the share in expectation (ceil(share/R) nearly always does).
    uint32_t qd = static_cast<uint32_t>(std::min<uint64_t>(cap, (d.share + plan.rounds - 1) / plan.rounds));
    qd = std::max<uint32_t>(qd, 1);
    while (qd < cap && ExpectedDistinctChunks(d.chunks, qd, plan.rounds) < static_cast<double>(d.share)) ++qd;
    d.labels_per_round = qd;
    d.expected_distinct = ExpectedDistinctChunks(d.chunks, qd, plan.rounds);
    d.reaches_share = d.expected_distinct >= static_cast<double>(d.share) - 1e-9;
    d.detection_probability = DetectionProbability(policy.target_fraction, d.expected_distinct);
    planned.push_back(d.chunks);  // planned bytes are chunks * m * 32: the fraction does not depend on m
    expected.push_back(d.expected_distinct);
  }
  plan.planned_fraction = JointMissingFraction(planned, expected, policy.confidence);
  plan.reaches_target = plan.planned_fraction <= policy.target_fraction * (1 + 1e-9);
  return plan;
}

StatusOr<FillRule> ChooseFillDeadline(uint64_t measured_fill_us, uint64_t node_claim_us,
                                      const CalibrationPolicy& policy) {
  WP_RETURN_IF_ERROR(ValidatePolicy(policy));
  if (measured_fill_us == 0) return InvalidArgumentError("measured fill time is 0: nothing was measured");
  FillRule f;
  f.measured_fill_us = measured_fill_us;
  f.node_claim_us = node_claim_us;
  f.basis_us = node_claim_us > 0 ? std::min(measured_fill_us, node_claim_us) : measured_fill_us;
  auto fill_deadline = CeilScaled(f.basis_us, 1.0 + policy.fill_slack);
  if (!fill_deadline.ok()) return fill_deadline.status().WithContext("fill deadline");
  f.fill_deadline_us = std::max<uint64_t>(1, *fill_deadline);
  if (!MeetsFillMargin(f.fill_deadline_us, measured_fill_us)) {
    return FailedPreconditionError(
        "the node is too slow for the fill deadline its own profile sets: it claims a fill of " +
        std::to_string(node_claim_us) + " us, so the deadline is " + std::to_string(f.fill_deadline_us) +
        " us (claim * (1 + slack " + FormatFixed(policy.fill_slack, 2) + ")), but it took " +
        std::to_string(measured_fill_us) + " us on the challenger's clock and the deadline must keep " +
        FormatFixed(1 + kFillDeadlineMargin, 1) +
        " x the measured fill. Re-run `wipeproof-prover bench --what=all` on the node under the same "
        "conditions, or find out why its fill was slow");
  }
  if (policy.max_fill_deadline_us > 0 && f.fill_deadline_us > policy.max_fill_deadline_us) {
    return FailedPreconditionError("the fill deadline " + std::to_string(f.fill_deadline_us) + " us (measured fill " +
                                   std::to_string(measured_fill_us) +
                                   " us * (1 + slack)) exceeds the authority's cap " +
                                   std::to_string(policy.max_fill_deadline_us) + " us: the node fills too slowly");
  }
  return f;
}

StatusOr<CalibrationResult> DeriveCalibratedProfile(const CalibrationInputs& in, const CalibrationPolicy& policy) {
  WP_RETURN_IF_ERROR(ValidatePolicy(policy));
  if (in.device_labels.empty() || in.device_labels.size() != in.device_models.size()) {
    return InvalidArgumentError("devices: want one label count and one model per planned device");
  }
  CalibrationResult out;
  WP_ASSIGN_OR_RETURN(out.round, ChooseRoundRule(in.rounds.p999_us, policy));
  const uint32_t m = out.round.chunk_labels;
  std::vector<uint64_t> chunks;
  for (size_t i = 0; i < in.device_labels.size(); ++i) {
    const uint64_t c = in.device_labels[i] / m;
    if (c == 0) {
      return FailedPreconditionError("device " + std::to_string(i) + " (" + in.device_models[i] + ") holds " +
                                     std::to_string(in.device_labels[i]) +
                                     " labels, less than one chunk at m = " + std::to_string(m));
    }
    chunks.push_back(c);
  }
  WP_ASSIGN_OR_RETURN(out.sampling, ChooseSampling(chunks, policy));
  WP_ASSIGN_OR_RETURN(out.fill, ChooseFillDeadline(in.measured_fill_us, in.claims.fill_estimate_us, policy));

  // Warnings: what the node claims that cannot make anything stricter here.
  out.warnings = in.claims.notes;
  const AdversaryClass& a = policy.adversary;
  if (in.claims.sequential_compression_ps > 0 &&
      in.claims.sequential_compression_ps < static_cast<double>(a.t_min_ps)) {
    out.warnings.push_back("class " + a.name + " assumes no sequential compression faster than " +
                           std::to_string(a.t_min_ps) + " ps, but this node's own " + in.claims.sequential_where +
                           " measured " + FormatPicoseconds(in.claims.sequential_compression_ps) +
                           " ps: the class does not rule out this node's own hardware; the authority should lower "
                           "t_min in its classes file");
  }
  if (policy.max_round_deadline_us == 0) {
    out.warnings.push_back(
        "no cap on the round deadline (--max_round_deadline_us): its " + std::to_string(out.round.round_deadline_us) +
        " us are also the reach of a relocation (labels kept on any machine within that round trip answer in time), "
        "so the wave and storage declarations must cover every memory that near; a cap at the reach they were made "
        "for refuses a node (or network) that is slow only while it is calibrated");
  }
  if (!out.sampling.reaches_target) {
    uint64_t all_chunks = 0;
    for (const DeviceSampling& d : out.sampling.devices) all_chunks += d.chunks;
    double expected = 0;
    for (const DeviceSampling& d : out.sampling.devices) expected += d.expected_distinct;
    const std::string why =
        "the planned statement misses its target: at m = " + std::to_string(m) + " the node's " +
        std::to_string(out.sampling.devices.size()) + " device(s) hold " + std::to_string(all_chunks) + " chunks; " +
        std::to_string(out.sampling.rounds) + " round(s) check " + FormatFixed(expected, 1) +
        " distinct chunks in expectation, fewer than the N = " + std::to_string(out.sampling.chunks_needed) +
        " needed, so a passing verdict would bound the unwiped part of the planned memory at " +
        FormatFixed(out.sampling.planned_fraction * 100, 2) + "% at " + FormatFixed(policy.confidence * 100, 3) +
        "% confidence, not the " + FormatFixed(policy.target_fraction * 100, 2) +
        "% asked for. A smaller m (a closer challenger, or the 192 format), more memory in the plan, more labels "
        "per round (--labels_per_round), or a larger --target_fraction would reach it";
    return FailedPreconditionError(why);
  }
  if (a.safety_factor < kMinStatedSafetyFactor) {
    return FailedPreconditionError("class " + a.name + " has safety factor " + FormatFixed(a.safety_factor, 2) +
                                   ", below " + FormatFixed(kMinStatedSafetyFactor, 1) +
                                   ": verdicts never state a bound under it, so no calibrated profile is written");
  }

  Profile& p = out.profile;
  p = DefaultProfile();
  p.name = in.profile_name;
  p.chunk_labels = m;
  p.format = policy.format;
  p.rounds = out.sampling.rounds;
  // labels_per_round: the largest q_d; models whose devices need less get their own entry (the
  // plan caps q at a device's chunks anyway).
  std::map<std::string, uint32_t> by_model;
  uint32_t q_max = 1;
  for (size_t i = 0; i < out.sampling.devices.size(); ++i) {
    uint32_t& q = by_model[in.device_models[i]];
    q = std::max(q, out.sampling.devices[i].labels_per_round);
    q_max = std::max(q_max, q);
  }
  p.labels_per_round = q_max;
  p.labels_per_round_by_model.clear();
  for (const auto& [model, q] : by_model) {
    if (q != q_max) p.labels_per_round_by_model[model] = q;
  }
  p.round_deadline_us = out.round.round_deadline_us;
  // The last guard before `calibrated: true`: verdicts state a bound only at >= 1.2 x p99.9.
  if (!MeetsHonestRoundMargin(p.round_deadline_us, in.rounds.p999_us)) {
    return InternalError("derived round deadline " + std::to_string(p.round_deadline_us) + " us is below " +
                         FormatFixed(kHonestRoundMargin, 1) + " x the honest p99.9 " +
                         std::to_string(in.rounds.p999_us) + " us: refusing to mark it calibrated");
  }
  // Profiles carry the fill deadline in whole milliseconds: round up.
  p.fill_deadline_us = (out.fill.fill_deadline_us + 999) / 1000 * 1000;
  p.adversary = a;
  p.confidence = policy.confidence;
  p.calibrated = true;
  p.honest_round_p999_us = in.rounds.p999_us;
  p.honest_fill_us = out.fill.measured_fill_us;
  p.calibrated_at_unix_us = in.calibrated_at_unix_us;
  p.order_ttl_us = policy.order_ttl_us;
  WP_RETURN_IF_ERROR(ValidateProfile(p).WithContext("derived profile"));
  return out;
}

}  // namespace wipeproof

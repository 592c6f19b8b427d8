#include "challenger/calibration/parameter_planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>

#include "challenger/fleet/plan_builder.h"
#include "challenger/session/bound.h"
#include "challenger/session/session_plan.h"
#include "common/numbers.h"
#include "kernels/graph_metrics.h"

namespace wipeproof {

namespace {
constexpr uint32_t kPlannedHoldingBatches = kHoldingBatches;  // session_plan.h
}  // namespace

namespace {

// 2^21 block-0 chaining values are cached for 192 (kernels/cv0_cache.h kDefaultCv0CacheBytes / 32).
constexpr uint64_t kCv0CachedNodes = uint64_t{1} << 21;

// nodes_hashed(m), memoised: m = 2^20 takes about a second to replay.
uint64_t NodesHashed(uint32_t m) {
  static std::mutex mu;
  static std::map<uint32_t, uint64_t> memo;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = memo.find(m);
    if (it != memo.end()) return it->second;
  }
  const uint64_t n = ComputeGraphMetrics(m).nodes_hashed;
  std::lock_guard<std::mutex> lock(mu);
  memo[m] = n;
  return n;
}

double NodesPerLabel(uint32_t m) { return static_cast<double>(NodesHashed(m)) / m; }

// Sampling for one node's devices at m, sized for the node statement over every device (each kind
// expanded by its count), returned per device kind (devices of a kind sample alike).
StatusOr<SamplingPlan> SamplingAt(const PlanInputs& in, uint32_t m, std::vector<uint64_t>* chunks_out) {
  std::vector<uint64_t> chunks, every_device;
  for (const auto& d : in.devices) {
    chunks.push_back(PlannedLabelCount(d.capacity_bytes, d.reserve_bytes, m) / m);
    if (chunks.back() == 0) {
      return FailedPreconditionError(d.model + ": " + std::to_string(d.capacity_bytes) + " bytes less " +
                                     std::to_string(d.reserve_bytes) +
                                     " reserve hold no chunk of m = " + std::to_string(m));
    }
    for (uint32_t i = 0; i < d.count; ++i) every_device.push_back(chunks.back());
  }
  if (chunks_out != nullptr) *chunks_out = chunks;
  WP_ASSIGN_OR_RETURN(SamplingPlan all, ChooseSampling(every_device, in.policy));
  SamplingPlan per_kind = all;
  per_kind.devices.clear();
  size_t first = 0;
  for (const auto& d : in.devices) {
    per_kind.devices.push_back(all.devices[first]);
    first += d.count;
  }
  return per_kind;
}

// The node statement's bound as a fraction of the planned bytes for the rows' expected distinct
// chunks (each kind `count` times), at `confidence`.
double PlannedFraction(const std::vector<PlanDeviceRow>& rows, double confidence) {
  std::vector<uint64_t> planned;
  std::vector<double> expected;
  for (const PlanDeviceRow& row : rows) {
    for (uint32_t i = 0; i < row.count; ++i) {
      planned.push_back(row.planned_bytes);
      expected.push_back(row.expected_distinct);
    }
  }
  return JointMissingFraction(planned, expected, confidence);
}

Status CheckInputs(const PlanInputs& in) {
  if (in.devices.empty()) return InvalidArgumentError("no devices: give --gpus and/or --host_memory_gib");
  for (const auto& d : in.devices) {
    if (d.count < 1) return InvalidArgumentError(d.model + ": count must be >= 1");
    if (d.capacity_bytes == 0 || d.reserve_bytes >= d.capacity_bytes) {
      return InvalidArgumentError(d.model + ": capacity must exceed the reserve");
    }
    if (!(d.fill_bytes_per_s > 0) || !std::isfinite(d.fill_bytes_per_s)) {
      return InvalidArgumentError(d.model + ": fill rate must be finite and > 0");
    }
    if (d.fill_rate_chunk_labels > kMaxChunkLabels) {
      return InvalidArgumentError(d.model + ": fill rate m must be in [1, 2^20]");
    }
  }
  if (in.fill_rate_chunk_labels < 1 || in.fill_rate_chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("fill rate m must be in [1, 2^20]");
  }
  if (in.honest_round_p999_us == 0 && !in.profile) return InvalidArgumentError("honest round p99.9 must be > 0");
  if (in.honest_round_p999_us > kMaxHonestRoundP999Us) {
    return InvalidArgumentError("honest round p99.9 " + std::to_string(in.honest_round_p999_us) + " us is above " +
                                std::to_string(kMaxHonestRoundP999Us) + " us (1000 s)");
  }
  if (in.nodes_per_wave < 1) return InvalidArgumentError("nodes per wave must be >= 1");
  if (in.challenger_cores < 1) return InvalidArgumentError("challenger cores must be >= 1");
  if (!(in.verify_compressions_per_s_per_core > 0) || !std::isfinite(in.verify_compressions_per_s_per_core)) {
    return InvalidArgumentError("verify rate must be finite and > 0");
  }
  if (in.classes.empty() && !in.profile) return InvalidArgumentError("no adversary class");
  if (!(in.compute_compressions_per_s == 0 ||
        (in.compute_compressions_per_s >= 1e3 && in.compute_compressions_per_s <= 1e16))) {
    return InvalidArgumentError("compute rate must be 0 or in [1000, 1e16] compressions/s");
  }
  if (in.fleet_nodes > 0 && (!(in.period_s > 0) || !std::isfinite(in.period_s))) {
    return InvalidArgumentError("the fleet's wipe period must be finite and > 0 seconds");
  }
  return Status::Ok();
}

// Everything after m, R and the deadlines are known.
void FillClassPlan(const PlanInputs& in, const SamplingPlan& s, const std::vector<uint64_t>& chunks,
                   const std::vector<uint32_t>& q_override, ClassPlan* c) {
  const uint32_t m = c->chunk_labels;
  c->chunks_needed = s.chunks_needed;
  c->rounds = s.rounds;
  c->fill_s = 0;
  for (size_t i = 0; i < in.devices.size(); ++i) {
    const PlanDeviceSpec& d = in.devices[i];
    PlanDeviceRow row;
    row.model = d.model;
    row.count = d.count;
    row.capacity_bytes = d.capacity_bytes;
    row.planned_bytes = PlannedLabelCount(d.capacity_bytes, d.reserve_bytes, m) * 32;
    row.chunks = chunks[i];
    row.labels_per_round = q_override.empty() ? s.devices[i].labels_per_round
                                              : static_cast<uint32_t>(std::min<uint64_t>(q_override[i], chunks[i]));
    row.expected_distinct = ExpectedDistinctChunks(row.chunks, row.labels_per_round, c->rounds);
    row.detection_probability = DetectionProbability(in.policy.target_fraction, row.expected_distinct);
    row.fill_s = FillSecondsAt(d, in.fill_rate_chunk_labels, m);
    c->fill_s = std::max(c->fill_s, row.fill_s);
    c->devices.push_back(row);
  }
  c->planned_fraction = PlannedFraction(c->devices, in.policy.confidence);
  c->reaches_target = c->planned_fraction <= in.policy.target_fraction * (1 + 1e-9);
  if (!c->reaches_target) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "the node statement bounds the unwiped part of the planned memory at %.3g%% at %.6g%% "
                  "confidence, not the target %.3g%%: too few chunks checked (N = %llu needed over the node)",
                  c->planned_fraction * 100, in.policy.confidence * 100, in.policy.target_fraction * 100,
                  static_cast<unsigned long long>(c->chunks_needed));
    c->warnings.push_back(buf);
  }
  c->rounds_s = c->rounds * static_cast<double>(c->round_deadline_us) / 1e6;
  // Proof rounds' distinct chunks, and the holding pool (session_plan.h: kHoldingBatches batches of
  // q/8 labels per device), all computed before the order.
  double chunk_sum = 0;
  for (const auto& row : c->devices) {
    chunk_sum += row.count * (row.expected_distinct +
                              double{kPlannedHoldingBatches} * std::max<uint32_t>(1, row.labels_per_round / 8));
  }
  c->expected_labels_cpu_s = in.nodes_per_wave * chunk_sum * VerifyCompressionsPerChunk(in.policy.format, m) /
                             in.verify_compressions_per_s_per_core;
  c->expected_labels_wall_s = c->expected_labels_cpu_s / in.challenger_cores;
  c->verification_node_wipes_per_core_hour =
      c->expected_labels_cpu_s > 0 ? 3600.0 * in.nodes_per_wave / c->expected_labels_cpu_s : 0;
  if (in.fleet_nodes > 0) {
    auto fleet = ChallengerCoresForFleet(in.fleet_nodes, in.period_s, c->verification_node_wipes_per_core_hour);
    if (fleet.ok()) c->fleet = *fleet;
  }
  // The expected labels come before the order: `serve` prepares a wave's next run while it waits
  // for it (hidden when they fit in the wave's period), `wipe` in front of the order.
  c->precompute_keeps_up = c->expected_labels_wall_s <= c->fill_s + c->rounds_s;
  if (!c->precompute_keeps_up) {
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "expected labels take %.1f s on %d challenger core(s), longer than the %.1f s wave run: serve "
                  "keeps waves apart by less than that only with more challenger cores (or fewer nodes per wave)",
                  c->expected_labels_wall_s, in.challenger_cores, c->fill_s + c->rounds_s);
    c->warnings.push_back(buf);
  }
  c->node_wipe_s = c->fill_s + c->rounds_s;
  c->wave_wipe_s = c->node_wipe_s;  // the wave's nodes run concurrently; the precompute counts them all
  if (in.compute_compressions_per_s > 0) {
    std::vector<PlanComputeDevices> devices;
    for (const auto& row : c->devices) devices.push_back({row.count, row.planned_bytes / 32, row.chunks});
    c->compute = ComputePlanComputeShare(devices, m, in.policy.format, c->planned_fraction, c->fill_s, c->rounds,
                                         in.compute_compressions_per_s, in.honest_round_p999_us);
    if (c->compute->share > 1) {
      c->warnings.push_back("compute share above 100%: the compute rate given is below the rate the modelled fill "
                            "reaches, so it cannot be the hardware's fastest (declare that)");
    }
  }
}

}  // namespace

double FillSecondsAt(const PlanDeviceSpec& device, uint32_t fill_rate_chunk_labels, uint32_t chunk_labels) {
  const double planned =
      static_cast<double>(PlannedLabelCount(device.capacity_bytes, device.reserve_bytes, chunk_labels)) * 32;
  const uint32_t m_ref = device.fill_rate_chunk_labels > 0 ? device.fill_rate_chunk_labels : fill_rate_chunk_labels;
  const double rate = device.fill_bytes_per_s * NodesPerLabel(m_ref) / NodesPerLabel(chunk_labels);
  return planned / rate;
}

double VerifyCompressionsPerChunk(LabelFormat format, uint32_t chunk_labels) {
  const double nodes = static_cast<double>(NodesHashed(chunk_labels));
  if (format == LabelFormat::kC1) return nodes;
  const double uncached = nodes > kCv0CachedNodes ? nodes - kCv0CachedNodes : 0;
  return 2 * nodes + uncached;
}

double NodeWipeSecondsAt(const PlanInputs& in, uint32_t m, uint32_t rounds, uint64_t round_deadline_us) {
  double fill = 0;
  for (const auto& d : in.devices) fill = std::max(fill, FillSecondsAt(d, in.fill_rate_chunk_labels, m));
  // The expected labels are prepared before the order (serve: ahead of the run), not in it.
  return fill + rounds * static_cast<double>(round_deadline_us) / 1e6;
}

StatusOr<NodeProfilePlanShape> PlanShapeFromNodeProfile(const NodeProfile& profile, LabelFormat format,
                                                        uint64_t gpu_reserve_bytes, bool include_host,
                                                        uint64_t host_capacity_bytes, uint64_t host_reserve_bytes) {
  NodeProfilePlanShape shape;
  std::vector<PlanDeviceSpec> gpus;
  std::optional<PlanDeviceSpec> host;
  for (const NodeDeviceProfile& d : profile.devices) {
    const bool is_host = d.kind == "host";
    if (d.lookup.p999_us > shape.slowest_lookup_p999_us) shape.slowest_lookup_p999_us = d.lookup.p999_us;
    if (is_host && !include_host) {
      shape.notes.push_back("host memory left out (not in the plan)");
      continue;
    }
    const NodeFillFigure* figure = nullptr;
    for (const NodeFillFigure& f : d.fills) {
      if (f.format == format && (figure == nullptr || f.chunk_labels > figure->chunk_labels)) figure = &f;
    }
    if (figure == nullptr) {
      shape.notes.push_back(d.id + " (" + d.name + ") left out: no " + LabelFormatName(format) + " fill figure");
      continue;
    }
    PlanDeviceSpec spec;
    spec.count = 1;
    spec.fill_bytes_per_s = figure->bytes_per_s;
    spec.fill_rate_chunk_labels = figure->chunk_labels;
    if (is_host) {
      spec.model = "host-dram";
      spec.capacity_bytes = host_capacity_bytes > 0 ? host_capacity_bytes : d.total_bytes;
      spec.reserve_bytes = host_reserve_bytes;
      host = spec;
      continue;
    }
    spec.model = d.name.empty() ? d.kind + "-gpu" : d.name;
    spec.capacity_bytes = d.total_bytes;
    spec.reserve_bytes = gpu_reserve_bytes;
    if (spec.capacity_bytes <= spec.reserve_bytes) {
      shape.notes.push_back(d.id + " (" + d.name + ") left out: " + std::to_string(d.total_bytes) +
                            " bytes, not more than the reserve");
      continue;
    }
    bool grouped = false;
    for (PlanDeviceSpec& g : gpus) {
      if (g.model == spec.model && g.capacity_bytes == spec.capacity_bytes &&
          g.fill_rate_chunk_labels == spec.fill_rate_chunk_labels) {
        ++g.count;
        g.fill_bytes_per_s = std::min(g.fill_bytes_per_s, spec.fill_bytes_per_s);  // the slowest sets the fill
        grouped = true;
      }
    }
    if (!grouped) gpus.push_back(spec);
  }
  shape.devices = gpus;
  if (host && host->capacity_bytes > host->reserve_bytes) {
    shape.devices.push_back(*host);
  } else if (host) {
    shape.notes.push_back("host memory left out: its capacity does not exceed the reserve");
  }
  if (shape.devices.empty()) {
    std::string why;
    for (const auto& n : shape.notes) why += "; " + n;
    return InvalidArgumentError("the node profile has no device to plan" + why);
  }
  // Kept as doubles: a sub-picosecond figure is a measurement (floor() would read it as "none").
  if (profile.host_sequential_compression_ps > 0) {
    shape.sequential_compression_ps = profile.host_sequential_compression_ps;
    shape.sequential_where = "host core";
  }
  for (const NodeDeviceProfile& d : profile.devices) {
    if (d.kind == "host" || !(d.step_ps > 0)) continue;
    const double ps = d.step_ps;
    if (shape.sequential_compression_ps == 0 || ps < shape.sequential_compression_ps) {
      shape.sequential_compression_ps = ps;
      shape.sequential_where = d.name + " (" + d.id + ")";
    }
  }
  return shape;
}

StatusOr<FleetCores> ChallengerCoresForFleet(uint64_t fleet_nodes, double period_s, double node_wipes_per_core_hour) {
  if (fleet_nodes == 0) return InvalidArgumentError("a fleet has at least one node");
  if (!(period_s > 0) || !std::isfinite(period_s)) {
    return InvalidArgumentError("the fleet's wipe period must be finite and > 0 seconds");
  }
  if (!(node_wipes_per_core_hour > 0) || !std::isfinite(node_wipes_per_core_hour)) {
    return InvalidArgumentError("the verification throughput must be finite and > 0 node wipes per core-hour");
  }
  FleetCores f;
  f.fleet_nodes = fleet_nodes;
  f.period_s = period_s;
  f.node_wipes_per_hour = static_cast<double>(fleet_nodes) * 3600.0 / period_s;
  const double exact = f.node_wipes_per_hour / node_wipes_per_core_hour;
  // Beyond a million cores the plan is meaningless (and a double past 2^64 does not convert).
  constexpr double kMaxCores = 1e6;
  if (!std::isfinite(exact) || exact > kMaxCores) {
    return InvalidArgumentError("the fleet needs more than a million challenger cores (" + std::to_string(fleet_nodes) +
                                " nodes every " + std::to_string(period_s) + " s): check --fleet_nodes and --period_s");
  }
  // Rounded up, but a quotient that is whole up to rounding error (84.0000000001) stays whole.
  f.cores = static_cast<uint64_t>(std::max(1.0, std::ceil(exact * (1 - 1e-12))));
  f.utilisation = exact / static_cast<double>(f.cores);
  return f;
}

StatusOr<PlanResult> ComputeFleetPlan(const PlanInputs& in) {
  WP_RETURN_IF_ERROR(CheckInputs(in));
  PlanResult result;
  if (in.profile) {
    // Fixed parameters: the profile's m, R, q, deadlines and class.
    const Profile& p = *in.profile;
    WP_RETURN_IF_ERROR(ValidateProfile(p));
    PlanInputs fixed = in;
    fixed.policy.format = p.format;
    ClassPlan c;
    c.adversary = p.adversary;
    c.chunk_labels = p.chunk_labels;
    c.round_deadline_us = p.round_deadline_us;
    const DeadlineRuleResult rule = CheckDeadlineRule(p.chunk_labels, p.format, p.adversary.t_min_ps,
                                                      p.adversary.safety_factor, p.round_deadline_us, p.adversary.name);
    c.recompute_floor_us = rule.floor_ps / 1e6;
    c.rule_satisfied = rule.satisfied;
    c.feasible = true;
    if (!rule.satisfied) c.warnings.push_back("the profile does not meet the deadline rule: " + rule.explanation);
    if (!p.calibrated) c.warnings.push_back("the profile is not calibrated: verdicts under it state no bound");
    std::vector<uint64_t> chunks;
    auto s = SamplingAt(fixed, p.chunk_labels, &chunks);
    if (!s.ok()) return s.status();
    s->rounds = p.rounds;
    std::vector<uint32_t> q;
    for (const auto& d : in.devices) q.push_back(LabelsPerRoundFor(p, d.model));
    FillClassPlan(fixed, *s, chunks, q, &c);
    uint64_t largest = 0;
    for (const auto& row : c.devices) largest = std::max(largest, row.planned_bytes);
    c.fill_deadline_s = static_cast<double>(FillDeadlineUs(p, largest)) / 1e6;
    if (c.fill_deadline_s < c.fill_s) {
      c.warnings.push_back("the estimated fill takes longer than the profile's fill deadline");
    }
    result.classes.push_back(std::move(c));
    return result;
  }
  for (const AdversaryClass& a : in.classes) {
    PlanInputs one = in;
    one.policy.adversary = a;
    ClassPlan c;
    c.adversary = a;
    if (a.safety_factor < kMinStatedSafetyFactor) {
      c.feasible = false;
      c.refusal = "safety factor " + FormatFixed(a.safety_factor, 2) + " is below " +
                  FormatFixed(kMinStatedSafetyFactor, 1) + ": verdicts never state a bound under this class";
      result.classes.push_back(std::move(c));
      continue;
    }
    auto rule = ChooseRoundRule(in.honest_round_p999_us, one.policy);
    if (!rule.ok()) {
      if (rule.status().code() != StatusCode::kFailedPrecondition) return rule.status();
      c.feasible = false;
      c.refusal = rule.status().message();
      result.classes.push_back(std::move(c));
      continue;
    }
    c.chunk_labels = rule->chunk_labels;
    c.round_deadline_us = rule->round_deadline_us;
    c.recompute_floor_us = rule->rule.floor_ps / 1e6;
    c.rule_satisfied = true;
    std::vector<uint64_t> chunks;
    auto s = SamplingAt(one, c.chunk_labels, &chunks);
    if (!s.ok()) {
      c.feasible = false;
      c.refusal = s.status().message();
      result.classes.push_back(std::move(c));
      continue;
    }
    c.feasible = true;
    FillClassPlan(one, *s, chunks, {}, &c);
    c.fill_deadline_s = c.fill_s * (1 + in.policy.fill_slack);
    if (in.policy.max_fill_deadline_us > 0 && c.fill_deadline_s * 1e6 > in.policy.max_fill_deadline_us) {
      c.warnings.push_back("the fill deadline exceeds the authority's cap");
    }
    result.classes.push_back(std::move(c));
  }
  return result;
}

}  // namespace wipeproof

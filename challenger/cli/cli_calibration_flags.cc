#include "challenger/cli/cli_calibration_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "challenger/calibration/plan_economics.h"
#include "challenger/cli/cli_flags.h"
#include "common/numbers.h"
#include "kernels/label_spec.h"
#include "proto/validate.h"

DEFINE_string(class, "commodity-cpu",
              "calibrate: adversary class to rule out (a name from --classes); plan: one class, default all");
DEFINE_string(classes, "",
              "adversary classes JSON file (docs/adversary-classes.json), plain or signed by the authority (`sign "
              "--what=classes`); verdicts state a bound only under a class from a signed one; default built-in "
              "(unsigned): commodity-cpu 25000 ps, fpga-asic 5000 ps, safety factor 2");
DEFINE_string(authority_pub, "",
              "plan: the authority's public key file (PREFIX-authority.pub) to check the signatures of --profile and "
              "--classes; without it they are not checked");
DEFINE_string(format, "posedb-blake3-c1", "label format: posedb-blake3-c1 (c_node 1) or posedb-blake3-192 (c_node 2)");
DEFINE_double(margin, 1.0,
              "round deadline = honest p99.9 round time * (1 + margin), margin in [0.2, 100]; default 1.0");
DEFINE_double(fill_slack, 0.5,
              "fill deadline = measured fill time * (1 + slack), slack in [0.2, 100] (the deadline keeps 1.2 x the "
              "measured fill); default 0.5");
DEFINE_double(target_fraction, 0.01,
              "the bound to reach: at most this fraction of the node's planned memory (all devices together) "
              "unwiped, in [1e-9, 1); default 0.01");
DEFINE_double(confidence, 0.999,
              "confidence of that bound (and the probability a hidden target fraction is caught), in (0, 1 - 1e-12]; "
              "also the profile's bound confidence; default 0.999");
DEFINE_uint32(labels_per_round, 64, "most labels challenged per device per round (q); default 64");
DEFINE_uint32(max_chunk_labels, 1048576, "largest m the authority accepts, a power of two <= 2^20; default 2^20");
DEFINE_double(max_fill_s, 0, "calibrate: refuse a fill deadline above this many seconds, in [0, 1e6]; 0 = no cap");
DEFINE_uint64(max_round_deadline_us, 0,
              "calibrate: refuse a round deadline above this many microseconds, in [0, 1e9]: the reach "
              "(round trip) within which the wave and storage declarations cover every memory, since "
              "labels kept that near answer in time; 0 = no cap (calibrate then warns)");
DEFINE_string(node_profile, "",
              "the node's signed profile (wipeproof-prover bench --what=all --out=FILE). calibrate: verified under "
              "the inventory's node key; optional, it can only tighten the parameters. plan: verified under "
              "--node_pub; its devices and fill rates replace --gpus, --gpu_model, --gpu_memory_bytes and the fill-rate "
              "flags (reserves and --host_memory_gib still apply), and its slowest lookup p99.9 is added to "
              "--round_p999_us (then the network's part)");
DEFINE_string(node_pub, "",
              "plan: the node's public key file (wipeproof-prover keygen's NODE.pub) that --node_profile must be "
              "signed with");
DEFINE_uint32(probe_chunk_labels, 256, "calibrate: m of the round-probe session, a power of two; default 256");
DEFINE_uint32(probe_rounds, 2000, "calibrate: rounds of the round-probe session; default 2000");
DEFINE_uint64(probe_round_deadline_us, 60000000,
              "calibrate: round deadline of the probe sessions, microseconds (generous: rounds are measured, not "
              "judged); default 60000000");
DEFINE_double(probe_fill_deadline_s, 3600,
              "calibrate: fill deadline of the probe sessions, seconds, in (0, 1e6]; default 3600");
DEFINE_string(name, "", "calibrate: name of the profile written; default NODE-CLASS-m2^K");
DEFINE_uint32(gpus, 0, "plan: GPUs per node, in [1, 256]; default none (a plan without GPUs)");
DEFINE_string(gpu_model, "NVIDIA H200", "plan: GPU model name (for the table and labels_per_round_by_model)");
DEFINE_uint64(gpu_memory_bytes, 150754820096ull, "plan: declared bytes per GPU; default 150754820096 (H200)");
DEFINE_uint64(gpu_reserve_bytes, 536870912ull, "plan: allowed reserve per GPU, bytes; default 536870912");
DEFINE_double(gpu_fill_gib_per_s, 3.5,
              "plan: fill rate per GPU at --fill_rate_chunk_labels, GiB/s, in [0.001, 1e6]; default 3.5 (the H200 target at "
              "m = 2^14: 140 GiB in 40 s; measure with `wipeproof-prover bench --what=all`)");
DEFINE_double(host_memory_gib, 0, "plan: host memory in the plan, GiB, in [0, 1048576]; default 0 (host not wiped)");
DEFINE_uint64(host_reserve_bytes, 0, "plan: allowed reserve of host memory, bytes; default 0");
DEFINE_double(host_fill_gib_per_s, 0.25,
              "plan: host fill rate at --fill_rate_chunk_labels, GiB/s, in [0.001, 1e6]; default 0.25 (measure with "
              "`wipeproof-prover bench --what=all`)");
DEFINE_uint32(fill_rate_chunk_labels, 16384, "plan: m the fill rates were measured at; default 16384");
DEFINE_uint64(round_p999_us, 200,
              "plan: honest round time p99.9 on the challenger's clock (network RTT + lookup), microseconds, "
              "in [1, 1e9]; default 200 (challenger in the rack)");
DEFINE_double(occupancy_short_s, 0,
              "plan: also print how to run occupancy windows (see --occupancy_window_s): per class and labels per "
              "round, the mean gap that keeps the node short by more than --occupancy_shortfall of its planned bytes "
              "for at most this many seconds (T*) at --confidence, and the challenger's CPU per node-hour; "
              "--occupancy_window_s sizes the pool (default 3600 s); 0 = none");
DEFINE_string(economics_p999_us, "",
              "plan: also print what a faster network buys: for each honest round p99.9 of this comma-separated "
              "list (microseconds, whole numbers, each in [1, 1000000000], at most 64 values, e.g. 25,50,100,200,400,800,1600), per class "
              "the m it allows, the fill time of one GPU of each named shape (H200, H100, MI300X: MODELLED by the "
              "device model, not measured) and the challenger's CPU-seconds per node-wipe of the planned node; with "
              "--node_profile each value is the network's part (the node's slowest lookup is added, as to "
              "--round_p999_us); not with --profile; default empty (not printed)");
DEFINE_uint32(nodes_per_wave, 1, "plan: nodes wiped at once by one challenger; default 1");
DEFINE_int32(challenger_cores, 0, "plan: challenger cores computing expected labels; 0 = this machine's");
DEFINE_double(verify_rate, 0,
              "plan: challenger compressions/s per core recomputing chunks, in [1e3, 1e12]; 0 = measure on this "
              "machine (~1 s)");
DEFINE_double(compute_rate, 0,
              "plan: the node's fastest declared label rate, compressions/s (the inventory's cpu_compressions_per_s "
              "plus its devices' label_rates), in [1000, 1e16]: each class's compute share, the part of an honest wipe "
              "the compute statement can prove spent; 0 = not shown");
DEFINE_uint64(fleet_nodes, 0,
              "plan: nodes in the fleet; with --period_s, how many challenger cores their expected labels need; "
              "0 = not asked");
DEFINE_double(period_s, 0,
              "plan: with --fleet_nodes, every node is wiped once per this many seconds (a wave's period_s)");
DEFINE_string(plot, "", "plan: write an SVG: detection probability vs hidden fraction, wipe time vs m per class");

namespace wipeproof {

namespace {

constexpr uint32_t kMaxPlanGpus = 256;  // GPUs per node: the largest systems today have 8 to 72

std::string G(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

// `flag` in [lo, hi] and finite (NaN and inf fail every comparison or the finiteness test).
Status InRange(const char* flag, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    return InvalidArgumentError(std::string(flag) + " must be a finite number in [" + G(lo) + ", " + G(hi) + "], got " +
                                G(v));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<AdversaryClasses> ClassesFromFlag(const AuthorityKey* authority) {
  auto classes = LoadAdversaryClassesDocument(FLAGS_classes, authority);
  if (!classes.ok()) return classes.status().WithContext("--classes");
  return classes;
}

StatusOr<CalibrationPolicy> PolicyFromFlags(const AdversaryClass& adversary) {
  CalibrationPolicy p;
  p.adversary = adversary;
  if (!ParseLabelFormat(FLAGS_format, &p.format)) {
    return InvalidArgumentError("--format must be posedb-blake3-c1 or posedb-blake3-192, got '" + FLAGS_format + "'");
  }
  if (!(FLAGS_margin >= kHonestRoundMargin - 1 - 1e-12) || !std::isfinite(FLAGS_margin)) {
    return InvalidArgumentError(
        "--margin must be >= 0.2 (a verdict states a bound only when the round deadline is "
        "at least 1.2 x the honest p99.9)");
  }
  if (FLAGS_margin > kMaxRoundMargin) {
    return InvalidArgumentError("--margin must be <= " + G(kMaxRoundMargin) + ", got " + G(FLAGS_margin));
  }
  WP_RETURN_IF_ERROR(InRange("--fill_slack", FLAGS_fill_slack, kFillDeadlineMargin, kMaxFillSlack));
  if (!(FLAGS_target_fraction >= kMinTargetFraction && FLAGS_target_fraction < 1)) {
    return InvalidArgumentError("--target_fraction must be in [1e-9, 1), got " + G(FLAGS_target_fraction));
  }
  if (!(FLAGS_confidence > 0 && FLAGS_confidence <= kMaxConfidence)) {
    return InvalidArgumentError("--confidence must be in (0, 1 - 1e-12], got " + G(FLAGS_confidence));
  }
  if (FLAGS_labels_per_round < 1) return InvalidArgumentError("--labels_per_round must be >= 1");
  if (!IsPowerOfTwo(FLAGS_max_chunk_labels) || FLAGS_max_chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("--max_chunk_labels must be a power of two <= 1048576");
  }
  WP_RETURN_IF_ERROR(InRange("--max_fill_s", FLAGS_max_fill_s, 0, kMaxFlagFillSeconds));
  if (FLAGS_max_round_deadline_us > kMaxFlagRoundDeadlineUs) {
    return InvalidArgumentError("--max_round_deadline_us must be in [0, 1e9], got " +
                                std::to_string(FLAGS_max_round_deadline_us));
  }
  p.round_margin = FLAGS_margin;
  p.fill_slack = FLAGS_fill_slack;
  p.target_fraction = FLAGS_target_fraction;
  p.confidence = FLAGS_confidence;
  p.labels_per_round = FLAGS_labels_per_round;
  p.max_chunk_labels = FLAGS_max_chunk_labels;
  p.max_fill_deadline_us = static_cast<uint64_t>(FLAGS_max_fill_s * 1e6);
  p.max_round_deadline_us = FLAGS_max_round_deadline_us;
  return p;
}

StatusOr<ProbeOptions> ProbeOptionsFromFlags() {
  ProbeOptions o;
  if (!IsPowerOfTwo(FLAGS_probe_chunk_labels) || FLAGS_probe_chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("--probe_chunk_labels must be a power of two <= 1048576");
  }
  if (FLAGS_probe_rounds < 1 || FLAGS_probe_rounds > kMaxProfileRounds) {
    return InvalidArgumentError("--probe_rounds must be in [1, " + std::to_string(kMaxProfileRounds) + "]");
  }
  if (FLAGS_probe_round_deadline_us < 1) return InvalidArgumentError("--probe_round_deadline_us must be >= 1");
  if (!(FLAGS_probe_fill_deadline_s > 0)) return InvalidArgumentError("--probe_fill_deadline_s must be > 0");
  WP_RETURN_IF_ERROR(InRange("--probe_fill_deadline_s", FLAGS_probe_fill_deadline_s, 0, kMaxFlagFillSeconds));
  o.probe_chunk_labels = FLAGS_probe_chunk_labels;
  o.probe_rounds = FLAGS_probe_rounds;
  o.probe_round_deadline_us = FLAGS_probe_round_deadline_us;
  o.probe_fill_deadline_us = static_cast<uint64_t>(FLAGS_probe_fill_deadline_s * 1e6);
  return o;
}

Status CheckPlanFlags() {
  if (FLAGS_round_p999_us < 1 || FLAGS_round_p999_us > kMaxHonestRoundP999Us) {
    return InvalidArgumentError("--round_p999_us must be in [1, " + std::to_string(kMaxHonestRoundP999Us) +
                                "] microseconds, got " + std::to_string(FLAGS_round_p999_us));
  }
  // --gpus: left out means no GPUs (a host-only plan); given, it is a real count.
  if (!gflags::GetCommandLineFlagInfoOrDie("gpus").is_default && (FLAGS_gpus < 1 || FLAGS_gpus > kMaxPlanGpus)) {
    return InvalidArgumentError("--gpus must be in [1, " + std::to_string(kMaxPlanGpus) + "] GPUs per node, got " +
                                std::to_string(FLAGS_gpus) + " (leave it out for a plan without GPUs)");
  }
  if (!IsPowerOfTwo(FLAGS_fill_rate_chunk_labels) || FLAGS_fill_rate_chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("--fill_rate_chunk_labels must be a power of two in [1, " +
                                std::to_string(kMaxChunkLabels) + "], got " +
                                std::to_string(FLAGS_fill_rate_chunk_labels));
  }
  WP_RETURN_IF_ERROR(InRange("--host_memory_gib", FLAGS_host_memory_gib, 0, kMaxHostMemoryGib));
  WP_RETURN_IF_ERROR(InRange("--gpu_fill_gib_per_s", FLAGS_gpu_fill_gib_per_s, kMinFillGibPerS, kMaxFillGibPerS));
  WP_RETURN_IF_ERROR(InRange("--host_fill_gib_per_s", FLAGS_host_fill_gib_per_s, kMinFillGibPerS, kMaxFillGibPerS));
  if (FLAGS_verify_rate != 0) {
    WP_RETURN_IF_ERROR(InRange("--verify_rate (0 = measure)", FLAGS_verify_rate, kMinVerifyRate, kMaxVerifyRate));
  }
  if (!FLAGS_node_pub.empty() && FLAGS_node_profile.empty()) {
    return InvalidArgumentError("--node_pub is only used with --node_profile (the key the node profile is signed with)");
  }
  if (FLAGS_occupancy_short_s != 0) {
    constexpr double kMaxSeconds = static_cast<double>(proto::kMaxOccupancyWindowUs) / 1e6;
    WP_RETURN_IF_ERROR(InRange("--occupancy_short_s", FLAGS_occupancy_short_s, 1e-6, kMaxSeconds));
    WP_RETURN_IF_ERROR(InRange("--occupancy_window_s (0 = 3600)", FLAGS_occupancy_window_s, 0, kMaxSeconds));
    if (!(FLAGS_occupancy_shortfall > 0 && FLAGS_occupancy_shortfall < 1)) {
      return InvalidArgumentError("--occupancy_shortfall must be a fraction in (0, 1) of the planned bytes");
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<uint64_t>> EconomicsRoundTimesFromFlag() {
  std::vector<uint64_t> out;
  const std::string& text = FLAGS_economics_p999_us;
  if (text.empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    uint64_t v = 0;
    bool digits = !part.empty() && part.size() <= 10;
    for (char c : part) {
      if (c < '0' || c > '9') digits = false;
    }
    if (digits) v = std::stoull(part);
    if (!digits || v < 1 || v > kMaxHonestRoundP999Us) {
      return InvalidArgumentError(
          "--economics_p999_us must be a comma-separated list of whole microseconds, each in [1, " +
          std::to_string(kMaxHonestRoundP999Us) + "], got '" + part + "' in '" + text + "'");
    }
    out.push_back(v);
    start = comma + 1;
  }
  if (out.size() > kMaxEconomicsRoundTimes) {
    return InvalidArgumentError("--economics_p999_us has " + std::to_string(out.size()) + " values, at most " +
                                std::to_string(kMaxEconomicsRoundTimes));
  }
  return out;
}

}  // namespace wipeproof

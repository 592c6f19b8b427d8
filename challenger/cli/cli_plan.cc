// `wipeproof-challenger plan` (cli.h): the offline planner (challenger/calibration/parameter_planner.h). From flags
// (GPU count, model, memory, fill rates, host memory, honest round time, classes, detection target), from a node's
// signed profile (--node_profile, verified under --node_pub before it is read: its devices, fill rates and slowest
// lookup), or from a parameter profile (--profile: its m, R, q, deadlines and class), a table per adversary class of m,
// R, labels per round, deadlines, wipe time per node and per wave, and the challenger's CPU time for expected labels;
// --json for one JSON object; --plot=FILE.svg for the charts; --economics_p999_us for the same node planned at each
// listed honest p99.9 (challenger/calibration/plan_economics.h, printed by plan_economics_view.h).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "challenger/calibration/node_profile_claims.h"
#include "challenger/calibration/parameter_planner.h"
#include "challenger/calibration/plan_economics.h"
#include "challenger/calibration/svg_plot.h"
#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/cli/plan_economics_view.h"
#include "challenger/cli/plan_occupancy_view.h"
#include "challenger/fleet/plan_builder.h"
#include "common/file_write.h"
#include "common/numbers.h"
#include "common/terminal_text.h"
#include "kernels/chunk_verifier.h"
#include "kernels/region_labeler.h"
#include "proto/key_files.h"

namespace wipeproof {

namespace {

constexpr char kSub[] = "plan";
const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

std::string Seconds(double s) {
  if (s < 1) return FormatFixed(s * 1000, 2) + " ms";
  if (s < 600) return FormatFixed(s, 1) + " s";
  return FormatFixed(s / 60, 1) + " min";
}

// The challenger's expected-label rate on one core, as parameter_planner.h counts it: chunks
// recomputed by RecomputeLabels (the session's path: batches of chunks, one random index each, m =
// 2^12) times VerifyCompressionsPerChunk, per second.
double MeasureVerifyRate(LabelFormat format) {
  constexpr uint32_t kM = 4096;
  constexpr uint64_t kChunks = 64;
  RegionSpec region;
  region.format = format;
  for (int i = 0; i < kSeedBytes; ++i) region.seed[i] = static_cast<uint8_t>(0x5C ^ i);
  region.chunk_labels = kM;
  region.first = 0;
  region.count = uint64_t{1} << 40;
  std::vector<uint64_t> indices(kChunks);
  std::vector<uint8_t> out(kChunks * 32);
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  uint64_t done = 0;
  double elapsed = 0;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  do {
    for (uint64_t c = 0; c < kChunks; ++c) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      indices[c] = (done + c) * kM + x % kM;
    }
    Status s = RecomputeLabels(region, indices.data(), indices.size(), out.data(), /*threads=*/1);
    if (!s.ok()) return 0;
    done += kChunks;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < 1.0);
  return static_cast<double>(done) * VerifyCompressionsPerChunk(format, kM) / elapsed;
}

// What `plan --node_profile` read, for the table and the JSON.
struct NodeProfileSource {
  std::string path;
  NodeProfile profile;
  NodeProfilePlanShape shape;
  uint64_t network_p999_us = 0;  // --round_p999_us
};

nlohmann::ordered_json PlanJson(const PlanInputs& in, const PlanResult& r, const NodeProfileSource* source) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : in.devices) {
    devices.push_back({{"model", d.model},
                       {"count", d.count},
                       {"capacity_bytes", d.capacity_bytes},
                       {"reserve_bytes", d.reserve_bytes},
                       {"fill_bytes_per_s", d.fill_bytes_per_s},
                       {"fill_rate_chunk_labels",
                        d.fill_rate_chunk_labels > 0 ? d.fill_rate_chunk_labels : in.fill_rate_chunk_labels}});
  }
  j["inputs"] = {{"devices", devices},
                 {"fill_rate_chunk_labels", in.fill_rate_chunk_labels},
                 {"honest_round_p999_us", in.honest_round_p999_us},
                 {"format", LabelFormatName(in.profile ? in.profile->format : in.policy.format)},
                 {"margin", in.policy.round_margin},
                 {"fill_slack", in.policy.fill_slack},
                 {"target_fraction", in.policy.target_fraction},
                 {"confidence", in.policy.confidence},
                 {"labels_per_round", in.policy.labels_per_round},
                 {"nodes_per_wave", in.nodes_per_wave},
                 {"challenger_cores", in.challenger_cores},
                 {"verify_compressions_per_s_per_core", in.verify_compressions_per_s_per_core},
                 {"profile", in.profile ? nlohmann::ordered_json(in.profile->name) : nlohmann::ordered_json()}};
  // The fleet of --fleet_nodes and --period_s (null when not asked).
  const bool fleet = in.fleet_nodes > 0;
  j["inputs"]["fleet_nodes"] = fleet ? nlohmann::ordered_json(in.fleet_nodes) : nlohmann::ordered_json();
  j["inputs"]["period_s"] = fleet ? nlohmann::ordered_json(in.period_s) : nlohmann::ordered_json();
  if (source != nullptr) {
    j["inputs"]["node_profile"] = {{"path", source->path},
                                   {"node_key_id", source->profile.node_key_id},
                                   {"software_version", source->profile.software_version},
                                   {"created_at", source->profile.created_at},
                                   {"hostname", source->profile.hostname},
                                   {"network_round_p999_us", source->network_p999_us},
                                   {"slowest_lookup_p999_us", source->shape.slowest_lookup_p999_us},
                                   {"sequential_compression_ps", source->shape.sequential_compression_ps},
                                   {"notes", source->shape.notes}};
  }
  nlohmann::ordered_json classes = nlohmann::ordered_json::array();
  for (const ClassPlan& c : r.classes) {
    nlohmann::ordered_json cj;
    cj["class"] = c.adversary.name;
    cj["t_min_ps"] = c.adversary.t_min_ps;
    cj["safety_factor"] = c.adversary.safety_factor;
    cj["feasible"] = c.feasible;
    if (!c.feasible) {
      cj["refusal"] = c.refusal;
      classes.push_back(cj);
      continue;
    }
    cj["chunk_labels"] = c.chunk_labels;
    cj["round_deadline_us"] = c.round_deadline_us;
    cj["recompute_floor_us"] = c.recompute_floor_us;
    cj["rule_satisfied"] = c.rule_satisfied;
    cj["chunks_needed"] = c.chunks_needed;
    cj["rounds"] = c.rounds;
    cj["planned_fraction"] = c.planned_fraction;
    cj["reaches_target"] = c.reaches_target;
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& d : c.devices) {
      rows.push_back({{"model", d.model},
                      {"count", d.count},
                      {"planned_bytes", d.planned_bytes},
                      {"chunks", d.chunks},
                      {"labels_per_round", d.labels_per_round},
                      {"expected_distinct_chunks", std::round(d.expected_distinct * 10) / 10},
                      {"detection_probability", d.detection_probability},
                      {"fill_s", d.fill_s}});
    }
    cj["devices"] = rows;
    cj["fill_s"] = c.fill_s;
    cj["fill_deadline_s"] = c.fill_deadline_s;
    cj["rounds_s"] = c.rounds_s;
    cj["expected_labels_cpu_s"] = c.expected_labels_cpu_s;
    cj["expected_labels_wall_s"] = c.expected_labels_wall_s;
    cj["precompute_keeps_up"] = c.precompute_keeps_up;
    cj["verification_node_wipes_per_core_hour"] = c.verification_node_wipes_per_core_hour;
    if (c.fleet) {
      cj["fleet"] = {{"fleet_nodes", c.fleet->fleet_nodes},
                     {"period_s", c.fleet->period_s},
                     {"node_wipes_per_hour", c.fleet->node_wipes_per_hour},
                     {"challenger_cores_needed", c.fleet->cores},
                     {"utilisation", c.fleet->utilisation}};
    } else {
      cj["fleet"] = nullptr;
    }
    if (c.compute) {
      cj["compute"] = {{"held_labels", c.compute->held_labels},
                       {"work_compressions", c.compute->work_compressions},
                       {"min_compute_s", c.compute->min_compute_s},
                       {"interval_s", c.compute->interval_s},
                       {"share", c.compute->share}};
    } else {
      cj["compute"] = nullptr;
    }
    cj["node_wipe_s"] = c.node_wipe_s;
    cj["wave_wipe_s"] = c.wave_wipe_s;
    cj["warnings"] = c.warnings;
    classes.push_back(cj);
  }
  j["classes"] = classes;
  return j;
}

std::string PlanTable(const PlanInputs& in, const PlanResult& r, const NodeProfileSource* source) {
  std::string t;
  if (source != nullptr) {
    const NodeProfile& p = source->profile;
    t += "node profile " + source->path + " verified (key " + p.node_key_id + ", " + p.software_version + ", " +
         p.created_at + (p.hostname.empty() ? "" : ", " + p.hostname) + "): honest round p99.9 = network " +
         std::to_string(source->network_p999_us) + " us + slowest lookup " +
         FormatFixed(source->shape.slowest_lookup_p999_us, 1) + " us\n";
    for (const auto& note : source->shape.notes) t += "note: " + note + "\n";
  }
  t += "node:";
  for (const auto& d : in.devices) {
    const uint32_t m_ref = d.fill_rate_chunk_labels > 0 ? d.fill_rate_chunk_labels : in.fill_rate_chunk_labels;
    // Sizes for people beside the bytes: "140.40 GiB = 150754820096 B".
    auto sized = [](uint64_t b) { return (b < 1024 ? "" : FormatBytesHuman(b) + " = ") + std::to_string(b) + " B"; };
    t += " " + std::to_string(d.count) + " x " + TerminalSafe(d.model) + " (" + sized(d.capacity_bytes) + ", reserve " +
         sized(d.reserve_bytes) + ", fill " + FormatFixed(d.fill_bytes_per_s / kGiB, 3) + " GiB/s at m = 2^" +
         std::to_string(FloorLog2(m_ref)) + ");";
  }
  t += "\n";
  if (in.profile) {
    t += "profile " + TerminalSafe(in.profile->name) + " (" + LabelFormatName(in.profile->format) + ")";
  } else {
    t += "honest round p99.9 " + std::to_string(in.honest_round_p999_us) + " us, margin " +
         FormatFixed(in.policy.round_margin, 2) + ", " + LabelFormatName(in.policy.format) +
         ", q <= " + std::to_string(in.policy.labels_per_round);
  }
  t += "; f = " + FormatFixed(in.policy.target_fraction * 100, 3) + "%, confidence " +
       FormatFixed(in.policy.confidence * 100, 3) + "%; wave of " + std::to_string(in.nodes_per_wave) +
       " node(s); challenger " + std::to_string(in.challenger_cores) + " core(s) at " +
       FormatFixed(in.verify_compressions_per_s_per_core / 1e6, 1) + " M compressions/s each\n";
  if (in.fleet_nodes > 0) {
    t += "fleet: " + std::to_string(in.fleet_nodes) + " node(s), each wiped every " + FormatFixed(in.period_s, 0) +
         " s: " + FormatFixed(static_cast<double>(in.fleet_nodes) * 3600 / in.period_s, 1) +
         " node wipes/h; challenger cores = ceil(node wipes/h / verification per core)\n";
  }
  t += "\n";

  std::vector<std::pair<std::string, std::vector<std::string>>> rows;
  auto row = [&](const std::string& name, auto value) {
    std::vector<std::string> cells;
    for (const ClassPlan& c : r.classes) cells.push_back(c.feasible ? value(c) : std::string("-"));
    rows.push_back({name, cells});
  };
  std::vector<std::string> header;
  for (const ClassPlan& c : r.classes) header.push_back(TerminalSafe(c.adversary.name));
  rows.push_back({"", header});
  row("t_min / safety", [](const ClassPlan& c) {
    return std::to_string(c.adversary.t_min_ps) + " ps / " + FormatFixed(c.adversary.safety_factor, 1);
  });
  row("m", [](const ClassPlan& c) { return "2^" + std::to_string(FloorLog2(c.chunk_labels)); });
  row("round deadline", [](const ClassPlan& c) { return std::to_string(c.round_deadline_us) + " us"; });
  row("recompute floor", [](const ClassPlan& c) {
    return FormatFixed(c.recompute_floor_us, 2) + " us" + (c.rule_satisfied ? "" : " (rule NOT met)");
  });
  row("chunks checked N (node)", [](const ClassPlan& c) { return std::to_string(c.chunks_needed); });
  row("rounds R", [](const ClassPlan& c) { return std::to_string(c.rounds); });
  row("node bound at c", [](const ClassPlan& c) {
    return FormatFixed(c.planned_fraction * 100, 3) + "%" + (c.reaches_target ? "" : " (target missed)");
  });
  for (size_t i = 0; i < in.devices.size(); ++i) {
    const std::string model = TerminalSafe(in.devices[i].model);
    row(model + ": chunks", [i](const ClassPlan& c) { return std::to_string(c.devices[i].chunks); });
    row("  labels per round", [i](const ClassPlan& c) { return std::to_string(c.devices[i].labels_per_round); });
    row("  detection at f (diag.)",
        [i](const ClassPlan& c) { return FormatFixed(c.devices[i].detection_probability * 100, 3) + "%"; });
    row("  fill", [i](const ClassPlan& c) { return Seconds(c.devices[i].fill_s); });
  }
  row("fill (node)", [](const ClassPlan& c) { return Seconds(c.fill_s); });
  row("fill deadline", [](const ClassPlan& c) { return Seconds(c.fill_deadline_s); });
  row("rounds (R x deadline)", [](const ClassPlan& c) { return Seconds(c.rounds_s); });
  row("expected labels, CPU", [](const ClassPlan& c) { return Seconds(c.expected_labels_cpu_s); });
  row("expected labels, wall",
      [](const ClassPlan& c) { return Seconds(c.expected_labels_wall_s) + (c.precompute_keeps_up ? "" : " (!)"); });
  row("verification, per core",
      [](const ClassPlan& c) { return FormatFixed(c.verification_node_wipes_per_core_hour, 1) + " node wipes/h"; });
  if (in.fleet_nodes > 0) {
    row("fleet: challenger cores", [](const ClassPlan& c) {
      return c.fleet ? std::to_string(c.fleet->cores) + " (" + FormatFixed(c.fleet->utilisation * 100, 1) + "% busy)"
                     : std::string("-");
    });
  }
  if (in.compute_compressions_per_s > 0) {
    row("compute share (proven)", [](const ClassPlan& c) {
      return c.compute ? FormatFixed(c.compute->share * 100, 1) + "% (" + Seconds(c.compute->min_compute_s) + ")"
                       : std::string("-");
    });
  }
  row("wipe per node", [](const ClassPlan& c) { return Seconds(c.node_wipe_s); });
  row("wipe per wave", [](const ClassPlan& c) { return Seconds(c.wave_wipe_s); });

  size_t w0 = 0, w = 14;
  for (const auto& [name, cells] : rows) {
    w0 = std::max(w0, name.size());
    for (const auto& cell : cells) w = std::max(w, cell.size());
  }
  for (const auto& [name, cells] : rows) {
    std::string line = name + std::string(w0 + 2 - name.size(), ' ');
    for (const auto& cell : cells) line += cell + std::string(w + 2 - cell.size(), ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    t += line + "\n";
  }
  for (const ClassPlan& c : r.classes) {
    if (!c.feasible) t += "\n" + TerminalSafe(c.adversary.name) + ": refused: " + TerminalSafe(c.refusal) + "\n";
    for (const auto& warning : c.warnings) {
      t += "warning (" + TerminalSafe(c.adversary.name) + "): " + TerminalSafe(warning) + "\n";
    }
  }
  return t;
}

std::string PlanSvg(const PlanInputs& in, const PlanResult& r) {
  // Panel 1: detection probability vs hidden fraction, per device kind (of the first feasible class).
  SvgChart detect;
  detect.title = "Detection probability per device (diagnostic: the bound is for the node)";
  detect.x = {"hidden fraction of a device", true, 1e-4, 1, {}};
  detect.y = {"probability the session fails", false, 0, 1, {}};
  detect.y_lines.push_back({in.policy.confidence, "confidence " + FormatFixed(in.policy.confidence * 100, 1) + "%"});
  const ClassPlan* first = nullptr;
  for (const ClassPlan& c : r.classes) {
    if (c.feasible && first == nullptr) first = &c;
  }
  if (first != nullptr) {
    for (size_t i = 0; i < first->devices.size(); ++i) {
      const PlanDeviceRow& d = first->devices[i];
      SvgSeries s;
      s.label = d.model + ": R=" + std::to_string(first->rounds) + ", q=" + std::to_string(d.labels_per_round) + " (" +
                FormatFixed(d.expected_distinct, 0) + " chunks)";
      s.color = kColors[i % 6];
      for (double lf = -4; lf <= 0.0001; lf += 0.05) {
        const double f = std::pow(10, lf);
        s.points.push_back({f, DetectionProbability(f, d.expected_distinct)});
      }
      detect.series.push_back(s);
      detect.markers.push_back({in.policy.target_fraction,
                                DetectionProbability(in.policy.target_fraction, d.expected_distinct),
                                "f = " + FormatFixed(in.policy.target_fraction * 100, 2) + "%", kColors[i % 6]});
    }
  }
  // Panel 2: wipe time per node vs m, per class: dashed grey where no class is satisfied, the
  // class's colour from its smallest m on.
  SvgChart wipe;
  wipe.title = "Wipe time per node vs m";
  wipe.x = {"m (labels per chunk)", true, 1024, 1048576, {}};
  for (int k = 10; k <= 20; k += 2) wipe.x.ticks.push_back({std::pow(2.0, k), "2^" + std::to_string(k)});
  double y_min = 1e300, y_max = 0;
  std::vector<std::pair<double, double>> all;
  for (int k = 10; k <= 20; ++k) {
    const uint32_t m = uint32_t{1} << k;
    double y = 0;
    bool ok = true;
    for (const auto& d : in.devices) ok = ok && PlannedLabelCount(d.capacity_bytes, d.reserve_bytes, m) > 0;
    if (!ok) continue;
    // Deadline and R as the plan uses them (the same for every class: they depend on the honest
    // round time and the detection target, not on t_min).
    const ClassPlan* any = first;
    const uint64_t deadline = any != nullptr ? any->round_deadline_us : in.honest_round_p999_us * 2;
    const uint32_t rounds = any != nullptr ? any->rounds : 1;
    y = NodeWipeSecondsAt(in, m, rounds, deadline);
    all.push_back({static_cast<double>(m), y});
    y_min = std::min(y_min, y);
    y_max = std::max(y_max, y);
  }
  wipe.y = {"seconds",
            true,
            std::pow(10, std::floor(std::log10(std::max(y_min, 1e-3)))),
            std::pow(10, std::ceil(std::log10(std::max(y_max, 1e-3)))),
            {}};
  wipe.series.push_back({"no class ruled out", "#999999", true, all});
  for (size_t i = 0; i < r.classes.size(); ++i) {
    const ClassPlan& c = r.classes[i];
    if (!c.feasible) continue;
    SvgSeries s;
    s.label = c.adversary.name + " (t_min " + FormatFixed(c.adversary.t_min_ps / 1000.0, 1) + " ns): m >= 2^" +
              std::to_string(FloorLog2(c.chunk_labels));
    s.color = kColors[i % 6];
    for (const auto& [m, y] : all) {
      if (m >= c.chunk_labels) s.points.push_back({m, y});
    }
    wipe.series.push_back(s);
    wipe.markers.push_back({static_cast<double>(c.chunk_labels), c.node_wipe_s,
                            c.adversary.name + ": " + Seconds(c.node_wipe_s), kColors[i % 6]});
  }
  return RenderSvg({detect, wipe},
                   "wipeproof plan: " + std::to_string(in.honest_round_p999_us) +
                       " us honest round p99.9, f = " + FormatFixed(in.policy.target_fraction * 100, 2) +
                       "%, confidence " + FormatFixed(in.policy.confidence * 100, 2) + "%");
}

}  // namespace

int RunPlan() {
  if (Status flags = CheckPlanFlags(); !flags.ok()) return ConfigError(kSub, flags);
  auto economics_p999 = EconomicsRoundTimesFromFlag();
  if (!economics_p999.ok()) return ConfigError(kSub, economics_p999.status());
  if (!economics_p999->empty() && !FLAGS_profile.empty()) {
    return ConfigError(kSub, "--economics_p999_us compares round times; --profile fixes m and the deadline: give one");
  }
  std::optional<AuthorityKey> authority;
  if (!FLAGS_authority_pub.empty()) {
    auto key = proto::ReadPublicKeyFile(FLAGS_authority_pub);
    if (!key.ok()) return ConfigError(kSub, key.status().WithContext("--authority_pub"));
    authority.emplace();
    authority->public_key = *key;
    authority->name = "the authority key (--authority_pub " + FLAGS_authority_pub + ")";
  }
  const AuthorityKey* authority_key = authority ? &*authority : nullptr;
  auto classes = ClassesFromFlag(authority_key);
  if (!classes.ok()) return ConfigError(kSub, classes.status());
  PlanInputs in;
  auto policy = PolicyFromFlags(classes->classes.front().adversary);
  if (!policy.ok()) return ConfigError(kSub, policy.status());
  in.policy = *policy;
  // --class is "commodity-cpu" by default for calibrate; plan uses every class unless it was set.
  gflags::CommandLineFlagInfo class_flag;
  const bool class_set = gflags::GetCommandLineFlagInfo("class", &class_flag) && !class_flag.is_default;
  if (class_set) {
    auto one = classes->Find(FLAGS_class);
    if (!one.ok()) return ConfigError(kSub, one.status().WithContext("--class"));
    in.classes.push_back(*one);
  } else {
    for (const auto& c : classes->classes) in.classes.push_back(c.adversary);
  }
  if (!FLAGS_profile.empty()) {
    auto profile = LoadProfileDocument(FLAGS_profile, authority_key, *classes);
    if (!profile.ok()) return ConfigError(kSub, profile.status().WithContext("--profile"));
    in.profile = *profile;
    in.policy.format = profile->format;
    in.policy.confidence = profile->confidence;
    in.honest_round_p999_us = profile->honest_round_p999_us;
  } else {
    in.honest_round_p999_us = FLAGS_round_p999_us;
  }
  // --authority_pub: say whether the documents verified, and what a verdict under them would state.
  if (authority_key != nullptr) {
    std::cerr << "wipeproof-challenger plan: --classes (" << TerminalSafe(classes->source) << "): "
              << (classes->signed_by_authority ? "signed by " + authority_key->name
                                               : "NOT signed by " + authority_key->name + ": " +
                                                     TerminalSafe(classes->signature_problem))
              << "\n";
    if (in.profile) {
      const std::string problem = ProfileEndorsementProblem(*in.profile);
      std::cerr << "wipeproof-challenger plan: --profile: "
                << (problem.empty() ? "signed by " + authority_key->name + ", under the authority's class"
                                    : "a verdict under it states no bound: " + TerminalSafe(problem))
                << "\n";
    }
  }
  // The node's signed profile: verified under --node_pub before a field of it is read.
  std::optional<NodeProfileSource> source;
  if (!FLAGS_node_profile.empty()) {
    if (FLAGS_node_pub.empty()) {
      return ConfigError(kSub, "--node_profile needs --node_pub (the node's public key file it is signed with)");
    }
    if (FLAGS_gpus > 0) return ConfigError(kSub, "give either --node_profile or --gpus, not both");
    auto key = proto::ReadPublicKeyFile(FLAGS_node_pub);
    if (!key.ok()) return ConfigError(kSub, key.status().WithContext("--node_pub"));
    auto loaded = LoadSignedNodeProfile(FLAGS_node_profile, *key, "--node_pub " + FLAGS_node_pub);
    if (!loaded.ok()) return ConfigError(kSub, loaded.status().WithContext("--node_profile"));
    source.emplace();
    source->path = FLAGS_node_profile;
    source->profile = std::move(*loaded);
    auto shape = PlanShapeFromNodeProfile(source->profile, in.policy.format, FLAGS_gpu_reserve_bytes,
                                          /*include_host=*/true, static_cast<uint64_t>(FLAGS_host_memory_gib * kGiB),
                                          FLAGS_host_reserve_bytes);
    if (!shape.ok()) return ConfigError(kSub, shape.status().WithContext("--node_profile"));
    source->shape = std::move(*shape);
    source->network_p999_us = FLAGS_round_p999_us;
    in.devices = source->shape.devices;
    if (!in.profile) {
      // Both parts are bounded (--round_p999_us <= kMaxHonestRoundP999Us, a lookup p99.9 <=
      // kMaxNodeProfileMicros), so the sum fits; ComputeFleetPlan refuses a sum above the maximum.
      const double lookup_us = std::ceil(source->shape.slowest_lookup_p999_us);
      if (!(lookup_us >= 0 && lookup_us <= kMaxNodeProfileMicros)) {
        return ConfigError(kSub, "--node_profile: slowest lookup p99.9 out of range");
      }
      in.honest_round_p999_us = FLAGS_round_p999_us + static_cast<uint64_t>(lookup_us);
      if (in.honest_round_p999_us > kMaxHonestRoundP999Us) {
        return ConfigError(kSub, "--round_p999_us " + std::to_string(FLAGS_round_p999_us) +
                                     " us + the node profile's slowest lookup p99.9 " +
                                     FormatFixed(source->shape.slowest_lookup_p999_us, 1) + " us is above " +
                                     std::to_string(kMaxHonestRoundP999Us) + " us (1000 s): not a round time");
      }
    }
  }
  if (!source && FLAGS_gpus > 0) {
    in.devices.push_back({FLAGS_gpu_model, FLAGS_gpus, FLAGS_gpu_memory_bytes, FLAGS_gpu_reserve_bytes,
                          FLAGS_gpu_fill_gib_per_s * kGiB});
  }
  if (!source && FLAGS_host_memory_gib > 0) {
    in.devices.push_back({"host-dram", 1, static_cast<uint64_t>(FLAGS_host_memory_gib * kGiB), FLAGS_host_reserve_bytes,
                          FLAGS_host_fill_gib_per_s * kGiB});
  }
  in.fill_rate_chunk_labels = FLAGS_fill_rate_chunk_labels;
  in.nodes_per_wave = FLAGS_nodes_per_wave;
  if (FLAGS_challenger_cores < 0) return ConfigError(kSub, "--challenger_cores must be >= 0");
  in.challenger_cores = FLAGS_challenger_cores > 0 ? FLAGS_challenger_cores
                                                   : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  in.verify_compressions_per_s_per_core =
      FLAGS_verify_rate > 0 ? FLAGS_verify_rate : MeasureVerifyRate(in.policy.format);
  if (!(in.verify_compressions_per_s_per_core > 0)) return ConfigError(kSub, "could not measure the verify rate");
  gflags::CommandLineFlagInfo period_flag;
  const bool period_set = gflags::GetCommandLineFlagInfo("period_s", &period_flag) && !period_flag.is_default;
  if (period_set && !(FLAGS_period_s > 0 && std::isfinite(FLAGS_period_s))) {
    return ConfigError(kSub, "--period_s must be a positive number of seconds (how often each node is wiped), got " +
                                 period_flag.current_value);
  }
  if ((FLAGS_fleet_nodes > 0) != period_set) {
    return ConfigError(kSub, "--fleet_nodes and --period_s go together (the fleet and how often each node is wiped)");
  }
  if (!(FLAGS_compute_rate == 0 || (FLAGS_compute_rate >= 1e3 && FLAGS_compute_rate <= 1e16))) {
    char got[32];
    std::snprintf(got, sizeof got, "%.10g", FLAGS_compute_rate);
    return ConfigError(kSub, std::string("--compute_rate must be in [1000, 1e16] compressions/s, or 0 (not shown), "
                                         "got ") + got);
  }
  in.compute_compressions_per_s = FLAGS_compute_rate;
  in.fleet_nodes = FLAGS_fleet_nodes;
  in.period_s = FLAGS_period_s;

  auto result = ComputeFleetPlan(in);
  if (!result.ok()) return ConfigError(kSub, result.status());
  if (in.fleet_nodes > 0) {
    // A node cannot be wiped more often than one wipe takes: the period's minimum is the longest
    // wipe of a feasible class planned.
    const ClassPlan* longest = nullptr;
    for (const ClassPlan& c : result->classes) {
      if (c.feasible && (longest == nullptr || c.node_wipe_s > longest->node_wipe_s)) longest = &c;
    }
    if (longest != nullptr && FLAGS_period_s < longest->node_wipe_s) {
      return ConfigError(kSub, "--period_s=" + period_flag.current_value +
                                   " is shorter than one wipe takes: at least " +
                                   FormatFixed(std::ceil(longest->node_wipe_s), 0) + " s (class " +
                                   longest->adversary.name + ": fill + rounds)");
    }
  }
  if (in.profile && in.profile->calibrated) {
    const std::string problem = ProfileEndorsementProblem(*in.profile);
    for (ClassPlan& c : result->classes) {
      if (!problem.empty()) c.warnings.push_back("verdicts under this profile state no bound: " + problem);
      if (in.profile->adversary.safety_factor < kMinStatedSafetyFactor) {
        c.warnings.push_back("the profile's safety factor is below 1.5: verdicts under it state no bound");
      }
    }
  }
  if (source && source->shape.sequential_compression_ps > 0) {
    for (ClassPlan& c : result->classes) {
      if (source->shape.sequential_compression_ps < static_cast<double>(c.adversary.t_min_ps)) {
        c.warnings.push_back("this node's own " + source->shape.sequential_where + " measured " +
                             FormatPicoseconds(source->shape.sequential_compression_ps) +
                             " ps per sequential compression, faster than the class's t_min " +
                             std::to_string(c.adversary.t_min_ps) +
                             " ps: the class does not rule out the node's own hardware");
      }
    }
  }
  // The economics: the same node planned at each listed p99.9 (with --node_profile, each the network's
  // part, the node's slowest lookup added as to --round_p999_us).
  std::optional<PlanEconomics> economics;
  uint64_t lookup_added_us = 0;
  if (!economics_p999->empty()) {
    if (source) lookup_added_us = in.honest_round_p999_us - FLAGS_round_p999_us;
    std::vector<uint64_t> honest;
    for (uint64_t p : *economics_p999) {
      if (p + lookup_added_us > kMaxHonestRoundP999Us) {
        return ConfigError(kSub, "--economics_p999_us " + std::to_string(p) +
                                     " us + the node profile's slowest lookup " + std::to_string(lookup_added_us) +
                                     " us is above " + std::to_string(kMaxHonestRoundP999Us) +
                                     " us (1000 s): not a round time");
      }
      honest.push_back(p + lookup_added_us);
    }
    auto computed = ComputePlanEconomics(in, honest, FLAGS_gpu_reserve_bytes);
    if (!computed.ok()) return ConfigError(kSub, computed.status().WithContext("--economics_p999_us"));
    economics = std::move(*computed);
  }
  // Occupancy windows: how to run them at each feasible class's m.
  std::optional<std::vector<OccupancyClassPlan>> occupancy;
  const uint64_t occupancy_window_us =
      static_cast<uint64_t>(std::llround((FLAGS_occupancy_window_s > 0 ? FLAGS_occupancy_window_s : 3600) * 1e6));
  const uint64_t occupancy_short_us = static_cast<uint64_t>(std::llround(FLAGS_occupancy_short_s * 1e6));
  if (FLAGS_occupancy_short_s > 0) {
    auto planned = PlanOccupancyPerClass(in, *result, FLAGS_occupancy_shortfall, std::max<uint64_t>(1, occupancy_short_us),
                                         occupancy_window_us);
    if (!planned.ok()) return ConfigError(kSub, planned.status().WithContext("--occupancy_short_s"));
    occupancy = std::move(*planned);
  }
  const NodeProfileSource* src = source ? &*source : nullptr;
  if (!FLAGS_plot.empty()) {
    Status written = WriteFileReplacing(FLAGS_plot, PlanSvg(in, *result));
    if (!written.ok()) return ConfigError(kSub, written.WithContext("--plot"));
  }
  if (FLAGS_json) {
    nlohmann::ordered_json j = PlanJson(in, *result, src);
    if (economics) j["economics"] = PlanEconomicsJson(in, *economics, lookup_added_us);
    if (occupancy) {
      j["occupancy"] = PlanOccupancyJson(*occupancy, in.policy.confidence, occupancy_short_us, occupancy_window_us);
    }
    std::cout << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << PlanTable(in, *result, src);
    if (!FLAGS_plot.empty()) std::cout << "plot: " << FLAGS_plot << "\n";
    if (economics) std::cout << "\n" << PlanEconomicsTable(in, *economics, lookup_added_us);
    if (occupancy) {
      std::cout << "\n" << PlanOccupancyTable(*occupancy, in.policy.confidence, occupancy_short_us, occupancy_window_us);
    }
  }
  bool any = false;
  for (const auto& c : result->classes) any = any || c.feasible;
  return any ? kExitOk : kExitFailed;
}

const CliSubcommand& PlanSubcommand() {
  static const CliSubcommand kSubcommand = {"plan",
   "offline calculator: m, R, counts, deadlines, wipe time and challenger CPU per adversary class",
   "From flags (GPUs per node, model, memory, fill rate; host memory; honest round p99.9; classes;\n"
   "detection target), a node's signed profile (--node_profile from bench --what=all, verified under\n"
   "--node_pub: its devices, fill rates and slowest lookup) or a parameter profile (--profile: its m,\n"
   "R, q, deadlines, class), computes per\n"
   "class what calibrate would: m, round deadline and recompute floor, R, labels per round and\n"
   "detection per device, fill time and deadline, wipe time per node and per wave, and the challenger's\n"
   "CPU time for expected labels (a warning when it cannot keep up with the fill). A table on stdout,\n"
   "or --json; --plot=FILE.svg draws detection probability against hidden fraction and wipe time\n"
   "against m per class. Fill rates scale with m by the graph's nodes per label. --fleet_nodes=F with\n"
   "--period_s=P adds the challenger cores a fleet of F nodes, each wiped every P s, needs (rounded up,\n"
   "with their utilisation). --economics_p999_us=25,50,...,1600 adds what a faster network buys: per\n"
   "listed honest p99.9 and class, the m it allows, the fill of one GPU of each named shape (modelled\n"
   "by the device model, not measured) and the challenger's CPU-seconds per node-wipe (also in --json\n"
   "as \"economics\"). --occupancy_short_s=T adds how to run occupancy windows: per class and labels per\n"
   "round, d(b), the mean gap that keeps the node short by more than --occupancy_shortfall for at most T s,\n"
   "and the challenger's CPU per node-hour (--json: \"occupancy\"). --authority_pub checks\n"
   "the signatures of --profile and --classes (verdicts state a bound only under signed ones). Exit 0,\n"
   "or 1 when no class is feasible.",
   {"profile",
    "authority_pub",
    "class",
    "classes",
    "format",
    "margin",
    "fill_slack",
    "target_fraction",
    "confidence",
    "labels_per_round",
    "max_chunk_labels",
    "gpus",
    "gpu_model",
    "gpu_memory_bytes",
    "gpu_reserve_bytes",
    "gpu_fill_gib_per_s",
    "host_memory_gib",
    "host_reserve_bytes",
    "host_fill_gib_per_s",
    "fill_rate_chunk_labels",
    "round_p999_us",
    "economics_p999_us",
    "occupancy_short_s",
    "occupancy_shortfall",
    "occupancy_window_s",
    "nodes_per_wave",
    "challenger_cores",
    "verify_rate",
    "compute_rate",
    "fleet_nodes",
    "period_s",
    "json",
    "plot",
    "node_profile",
    "node_pub"},
   &RunPlan,
   {{"class", "plan only this class (a name from --classes)", "every class of --classes"},
    {"occupancy_window_s", "with --occupancy_short_s: the window the pool of occupancy rounds is sized for, seconds",
     "3600"},
    {"occupancy_shortfall",
     "with --occupancy_short_s: b, the shortfall ruled out for longer than T*, as a fraction in (0, 1) of the node's "
     "planned bytes", "0.01"},
    {"profile",
     "plan under this parameter profile (plain or signed by the authority): its m, R, q, deadlines, class and "
     "confidence replace what plan would compute from the flags",
     "none: m, R and the deadlines are computed from the flags, as calibrate would"},
    {"confidence",
     "confidence of the bound (and the probability a hidden target fraction is caught), in (0, 1 - 1e-12]; with "
     "--profile, the profile's confidence is used instead"},
    {"json", "print the plan as JSON on stdout instead of the table"},
    {"node_profile",
     "the node's signed profile (wipeproof-prover bench --what=all --out=FILE), verified under --node_pub; its "
     "devices and fill rates replace --gpus, --gpu_model, --gpu_memory_bytes and the fill-rate flags (reserves and "
     "--host_memory_gib still apply), and its slowest lookup p99.9 is added to --round_p999_us (then the network's "
     "part)"}}};
  return kSubcommand;
}

}  // namespace wipeproof

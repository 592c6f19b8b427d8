// `wipeproof-challenger calibrate --node=NAME --class=CLASS ... --out=profile.json` (cli.h): measures
// the node over the real path with two probe sessions (calibration_session.h), reads its signed
// profile when given, and writes a calibrated parameter profile, or nothing when calibration
// refuses. docs/calibration.md.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <thread>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/ledger/ledger_record_sink.h"
#include "challenger/parameters/profile_json_writer.h"
#include "common/clock.h"
#include "common/file_write.h"
#include "common/numbers.h"
#include "common/terminal_text.h"
#include "proto/delegation.h"
#include "proto/signed_document.h"

namespace wipeproof {

namespace {

// Threads that computed the fill probe's expected labels (--threads; 0 = every core).
int VerificationThreads() {
  return FLAGS_threads > 0 ? FLAGS_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The challenger's verification throughput for the calibrated parameters: the fill probe prepared
// one node wipe's challenges and expected labels (proof and holding rounds) under them.
double VerificationNodeWipesPerCoreHour(const CalibrationRun& run) {
  const double core_s = run.fill_probe.prepare_us / 1e6 * VerificationThreads();
  return core_s > 0 ? 3600.0 / core_s : 0;
}

constexpr char kSub[] = "calibrate";

nlohmann::ordered_json StatsJson(const RoundTimeStats& s) {
  return {{"count", s.count},
          {"min_us", s.min_us},
          {"p50_us", s.p50_us},
          {"p90_us", s.p90_us},
          {"p99_us", s.p99_us},
          {"p999_us", s.p999_us},
          {"max_us", s.max_us},
          {"mean_us", std::round(s.mean_us * 10) / 10},
          {"stddev_us", std::round(s.stddev_us * 10) / 10},
          {"jitter_p99_minus_p50_us", s.jitter_us}};
}

nlohmann::ordered_json ReportJson(const CalibrationRun& run, const CalibrationRequest& req, const std::string& address,
                                  const NodeProfile* node_profile, const std::vector<std::string>& selectors) {
  const CalibrationPolicy& p = req.policy;
  const CalibrationResult& r = run.result;
  nlohmann::ordered_json j;
  j["node"] = req.node;
  j["address"] = address;
  j["adversary"] = {
      {"class", p.adversary.name}, {"t_min_ps", p.adversary.t_min_ps}, {"safety_factor", p.adversary.safety_factor}};
  j["policy"] = {{"format", LabelFormatName(p.format)},
                 {"margin", p.round_margin},
                 {"fill_slack", p.fill_slack},
                 {"target_fraction", p.target_fraction},
                 {"confidence", p.confidence},
                 {"labels_per_round", p.labels_per_round},
                 {"max_chunk_labels", p.max_chunk_labels},
                 {"max_fill_deadline_us", p.max_fill_deadline_us},
                 {"max_round_deadline_us", p.max_round_deadline_us}};
  j["round_probe"] = {{"chunk_labels", run.round_probe.chunk_labels},
                      {"rounds", run.round_probe.rounds_run},
                      {"labels_per_round", p.labels_per_round},
                      {"fill_us", run.round_probe.fill_us},
                      {"prepare_us", run.round_probe.prepare_us},
                      {"first_round_us", run.round_times_us.empty() ? 0 : run.round_times_us[0]},
                      {"round_time", StatsJson(run.rounds)}};
  j["fill_probe"] = {{"chunk_labels", run.fill_probe.chunk_labels},
                     {"fill_us", run.fill_probe.fill_us},
                     {"prepare_us", run.fill_probe.prepare_us},
                     {"prepare_threads", VerificationThreads()},
                     {"verification_node_wipes_per_core_hour", VerificationNodeWipesPerCoreHour(run)},
                     {"rounds", run.fill_probe.rounds_run},
                     {"round_us", run.trial_round_times_us},
                     {"pass", run.fill_probe.pass},
                     {"failure", run.fill_probe.failure}};
  if (node_profile != nullptr) {
    j["node_profile"] = {{"path", FLAGS_node_profile},
                         {"node_key_id", node_profile->node_key_id},
                         {"software_version", node_profile->software_version},
                         {"created_at", node_profile->created_at},
                         {"fill_estimate_us", run.claims.fill_estimate_us},
                         {"sequential_compression_ps", run.claims.sequential_compression_ps},
                         {"sequential_where", run.claims.sequential_where}};
  } else {
    j["node_profile"] = nullptr;
  }
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.sampling.devices.size(); ++i) {
    const DeviceSampling& d = r.sampling.devices[i];
    devices.push_back({{"selector", i < selectors.size() ? selectors[i] : ""},
                       {"chunks", d.chunks},
                       {"share", d.share},
                       {"labels_per_round", d.labels_per_round},
                       {"expected_distinct_chunks", std::round(d.expected_distinct * 10) / 10},
                       {"detection_probability", d.detection_probability}});
  }
  j["derived"] = {{"honest_round_p999_us", r.round.honest_p999_us},
                  {"round_deadline_us", r.round.round_deadline_us},
                  {"chunk_labels", r.round.chunk_labels},
                  {"recompute_floor_us", r.round.rule.floor_ps / 1e6},
                  {"rule", r.round.rule.explanation},
                  {"chunks_needed", r.sampling.chunks_needed},
                  {"rounds", r.sampling.rounds},
                  {"planned_fraction", r.sampling.planned_fraction},
                  {"devices", devices},
                  {"measured_fill_us", r.fill.measured_fill_us},
                  {"node_fill_claim_us", r.fill.node_claim_us},
                  {"fill_basis_us", r.fill.basis_us},
                  {"fill_deadline_us", r.fill.fill_deadline_us}};
  j["profile"] = ProfileToJson(r.profile);
  j["fill_margin"] = kFillDeadlineMargin;
  j["out"] = FLAGS_out;
  j["warnings"] = r.warnings;
  return j;
}

std::string ReportText(const CalibrationRun& run, const CalibrationRequest& req, const std::string& address,
                       const NodeProfile* node_profile, const std::vector<std::string>& selectors,
                       const proto::PublicKey& authority_public, bool signed_here) {
  const CalibrationPolicy& p = req.policy;
  const CalibrationResult& r = run.result;
  const RoundTimeStats& s = run.rounds;
  std::string t;
  t += "calibrate node " + TerminalSafe(req.node) + " (" + address + "), class " + TerminalSafe(p.adversary.name) +
       " (t_min " + std::to_string(p.adversary.t_min_ps) + " ps, safety " + FormatFixed(p.adversary.safety_factor, 2) +
       "), " + LabelFormatName(p.format) + "\n";
  t += "round probe: " + std::to_string(s.count) + " rounds, q = " + std::to_string(p.labels_per_round) +
       " per device, m = 2^" + std::to_string(FloorLog2(run.round_probe.chunk_labels)) +
       ", challenger's monotonic clock\n";
  t += "  round time: min " + std::to_string(s.min_us) + " us, p50 " + std::to_string(s.p50_us) + " us, p90 " +
       std::to_string(s.p90_us) + " us, p99 " + std::to_string(s.p99_us) + " us, p99.9 " + std::to_string(s.p999_us) +
       " us, max " + std::to_string(s.max_us) + " us\n";
  t += "  jitter: stddev " + FormatFixed(s.stddev_us, 1) + " us, p99 - p50 " + std::to_string(s.jitter_us) +
       " us (mean " + FormatFixed(s.mean_us, 1) + " us); first round " +
       std::to_string(run.round_times_us.empty() ? 0 : run.round_times_us[0]) + " us\n";
  t += "round deadline: p99.9 " + std::to_string(r.round.honest_p999_us) + " us * (1 + " +
       FormatFixed(p.round_margin, 2) + ") = " + std::to_string(r.round.round_deadline_us) + " us\n";
  t += "m = 2^" + std::to_string(FloorLog2(r.round.chunk_labels)) + " = " + std::to_string(r.round.chunk_labels) +
       ", the smallest power of two with 1.5*m*c_node*t_min/safety >= deadline: " + r.round.rule.explanation + "\n";
  t += "sampling: f = " + FormatFixed(p.target_fraction * 100, 3) + "%, confidence " +
       FormatFixed(p.confidence * 100, 3) + "% -> N = " + std::to_string(r.sampling.chunks_needed) +
       " chunks over the node's devices, R = " + std::to_string(r.sampling.rounds) +
       " rounds; the node statement bounds the unwiped part of the planned memory at " +
       FormatFixed(r.sampling.planned_fraction * 100, 3) + "%\n";
  for (size_t i = 0; i < r.sampling.devices.size(); ++i) {
    const DeviceSampling& d = r.sampling.devices[i];
    t += "  " + (i < selectors.size() ? selectors[i] : std::to_string(i)) + ": " + std::to_string(d.chunks) +
         " chunks, q = " + std::to_string(d.labels_per_round) + ", " + FormatFixed(d.expected_distinct, 1) +
         " distinct chunks expected (share " + std::to_string(d.share) + "), detection of f on this device alone " +
         FormatFixed(d.detection_probability * 100, 3) + "% (diagnostic)\n";
  }
  t += "fill probe: m = 2^" + std::to_string(FloorLog2(run.fill_probe.chunk_labels)) + ", fill " +
       FormatFixed(run.fill_probe.fill_us / 1e6, 3) + " s (order sent to report received)";
  t += ", after " + FormatFixed(run.fill_probe.prepare_us / 1e6, 3) + " s preparing challenges and expected labels";
  t += " (verification: " + FormatFixed(VerificationNodeWipesPerCoreHour(run), 1) + " node wipes per hour per core)";
  if (!run.trial_round_times_us.empty()) {
    uint64_t slowest = 0;
    for (uint64_t us : run.trial_round_times_us) slowest = std::max(slowest, us);
    t += "; " + std::to_string(run.trial_round_times_us.size()) + " rounds under the new deadline, slowest " +
         std::to_string(slowest) + " us";
  }
  t += run.fill_probe.pass ? "\n" : " (" + TerminalSafe(run.fill_probe.failure) + ")\n";
  t += "fill deadline: " + FormatFixed(r.fill.basis_us / 1e6, 3) + " s * (1 + " + FormatFixed(p.fill_slack, 2) +
       ") = " + FormatFixed(r.fill.fill_deadline_us / 1e6, 3) + " s, at least " +
       FormatFixed(1 + kFillDeadlineMargin, 1) + " x the measured fill " +
       FormatFixed(r.fill.measured_fill_us / 1e6, 3) + " s";
  if (r.fill.node_claim_us > 0) {
    t += std::string(" (basis: ") + (r.fill.basis_us < r.fill.measured_fill_us ? "the node's claim" : "measured") +
         "; node claims " + FormatFixed(r.fill.node_claim_us / 1e6, 3) + " s, measured " +
         FormatFixed(r.fill.measured_fill_us / 1e6, 3) + " s)";
  }
  t += "\n";
  if (node_profile != nullptr) {
    t += "node profile: " + FLAGS_node_profile + " verified (key " + node_profile->node_key_id + ", " +
         node_profile->software_version + ", " + node_profile->created_at + ")";
    if (run.claims.sequential_compression_ps > 0) {
      t += "; fastest sequential compression " + FormatPicoseconds(run.claims.sequential_compression_ps) + " ps (" +
           run.claims.sequential_where + ")";
    }
    t += "\n";
  } else {
    t += "node profile: none (--node_profile): the measurements above alone set the parameters\n";
  }
  for (const auto& w : r.warnings) t += "warning: " + w + "\n";
  t += "profile " + TerminalSafe(r.profile.name) + ": m = " + std::to_string(r.profile.chunk_labels) +
       ", R = " + std::to_string(r.profile.rounds) + ", q = " + std::to_string(r.profile.labels_per_round) +
       ", round deadline " + std::to_string(r.profile.round_deadline_us) + " us, fill deadline " +
       std::to_string(r.profile.fill_deadline_us / 1000) + " ms, calibrated, " +
       (signed_here ? "signed by authority key " + proto::KeyIdHex(proto::KeyIdOf(authority_public))
                    : std::string("unsigned: the authority reviews it and signs it offline (sign --what=profile)")) +
       "\n";
  return t;
}

}  // namespace

int RunCalibrate() {
  if (FLAGS_node.empty()) return ConfigError(kSub, "--node is required (inventory name of the node)");
  if (FLAGS_out.empty()) return ConfigError(kSub, "--out is required (the parameter profile file to write)");
  auto inventory = InventoryFromFlag();
  if (!inventory.ok()) return ConfigError(kSub, inventory.status());
  const InventoryNode* node = inventory->FindNode(FLAGS_node);
  if (node == nullptr) return ConfigError(kSub, "node '" + FLAGS_node + "' is not in " + FLAGS_inventory);
  auto keys = KeysFromFlags();
  if (!keys.ok()) return ConfigError(kSub, keys.status());
  // Under a delegation (the standing challenger: the authority's key stays offline) the probe
  // orders are the challenger's, and the profile is written unsigned for the authority to sign.
  const bool authority_here = keys->authority.secret_key != decltype(keys->authority.secret_key){};
  if (!authority_here) {
    auto delegation = proto::VerifyDelegation(proto::AsView(keys->delegation), keys->authority.public_key);
    if (!delegation.ok()) return ConfigError(kSub, delegation.status().WithContext("--delegation"));
    const int64_t now_us = SystemClock().UnixMicros();
    if (now_us < delegation->root().getNotBeforeUnixUs() || now_us >= delegation->root().getNotAfterUnixUs()) {
      return ConfigError(kSub, "--delegation: the " + proto::DescribeDelegation(delegation->root()) +
                                   " is not in force now: ask the authority for a calibration delegation (`delegate`)");
    }
    if (!delegation->root().getAllowUnsignedProfiles()) {
      return ConfigError(kSub, "--delegation: the " + proto::DescribeDelegation(delegation->root()) +
                                   " does not allow unsigned profiles, and calibrate's probe sessions run under "
                                   "profiles it makes itself: the authority delegates with --allow_unsigned_profiles "
                                   "(those sessions state no bound)");
    }
  }
  auto classes = SignedClassesFromFlag(keys->authority.public_key);
  if (!classes.ok()) return ConfigError(kSub, classes.status());
  auto adversary = classes->Find(FLAGS_class);
  if (!adversary.ok()) return ConfigError(kSub, adversary.status().WithContext("--class"));
  auto policy = PolicyFromFlags(*adversary);
  if (!policy.ok()) return ConfigError(kSub, policy.status());
  auto probe = ProbeOptionsFromFlags();
  if (!probe.ok()) return ConfigError(kSub, probe.status());
  auto tcp = TcpSessionOptionsFromFlags();
  if (!tcp.ok()) return ConfigError(kSub, tcp.status());
  // Refused before any probe: a profile for a class below the smallest safety factor would never
  // state a bound.
  if (adversary->safety_factor < kMinStatedSafetyFactor) {
    std::fprintf(stderr,
                 "wipeproof-challenger %s: refused, no profile written: class %s has safety factor %g, below %g: "
                 "verdicts never state a bound under it\n",
                 kSub, adversary->name.c_str(), adversary->safety_factor, kMinStatedSafetyFactor);
    return kExitFailed;
  }
  if (!classes->signed_by_authority) {
    std::fprintf(stderr,
                 "wipeproof-challenger %s: warning: %s; verdicts under the profile written state a bound only when "
                 "wipe and serve get --classes signed by the authority with the same class %s\n",
                 kSub, classes->signature_problem.c_str(), adversary->name.c_str());
  }

  // The node's signed profile, verified under the inventory's key for the node: a profile signed by
  // another key, or altered after signing, is refused before anything in it is read.
  std::optional<NodeProfile> node_profile;
  if (!FLAGS_node_profile.empty()) {
    auto loaded = LoadSignedNodeProfile(FLAGS_node_profile, node->public_key);
    if (!loaded.ok()) return ConfigError(kSub, loaded.status().WithContext("--node_profile"));
    node_profile = std::move(*loaded);
  }

  std::unique_ptr<Ledger> ledger;
  std::unique_ptr<RecordSink> sink;
  if (!FLAGS_ledger.empty()) {
    auto opened = LedgerFromFlag(keys->challenger, *inventory);
    if (!opened.ok()) return ConfigError(kSub, opened.status());
    ledger = std::move(*opened);
    Status room = ledger->CheckRoomForSession();
    if (!room.ok()) return ConfigError(kSub, room);
    sink = std::make_unique<LedgerRecordSink>(ledger.get());
  } else {
    sink = std::make_unique<DiscardingRecordSink>();
  }

  const TcpSessionOptions options = *tcp;
  const SessionDriver drive = [&](const SessionPlan& plan) {
    return RunTcpSession(plan, *keys, *sink, nullptr, options);
  };
  CalibrationRequest request;
  request.inventory = &*inventory;
  request.node = FLAGS_node;
  request.profile_name = FLAGS_name;
  request.policy = *policy;
  request.probe = *probe;
  request.node_profile = node_profile ? &*node_profile : nullptr;
  auto run = RunCalibration(request, drive, SystemClock(),
                            [](const std::string& line) { std::fprintf(stderr, "calibrate: %s\n", line.c_str()); });
  if (!run.ok()) {
    if (run.status().code() == StatusCode::kFailedPrecondition || run.status().code() == StatusCode::kUnavailable) {
      std::fprintf(stderr, "wipeproof-challenger %s: refused, no profile written: %s\n", kSub,
                   run.status().message().c_str());
      return kExitFailed;
    }
    return ConfigError(kSub, run.status());
  }
  // Never write `calibrated: true` with a deadline verdicts cannot state a bound under.
  if (run->result.profile.calibrated &&
      !MeetsHonestRoundMargin(run->result.profile.round_deadline_us, run->result.profile.honest_round_p999_us)) {
    std::fprintf(stderr,
                 "wipeproof-challenger %s: refused, no profile written: round deadline %llu us is below %.1f x "
                 "the honest p99.9 %llu us\n",
                 kSub, static_cast<unsigned long long>(run->result.profile.round_deadline_us), kHonestRoundMargin,
                 static_cast<unsigned long long>(run->result.profile.honest_round_p999_us));
    return kExitFailed;
  }
  // With the authority's key here the profile is written signed (proto/signed_document.h), so wipe
  // and serve can tell it is the authority's; under a delegation it is written unsigned, for the
  // authority to review and sign offline (`sign --what=profile`, byte for byte).
  const std::string profile_text =
      ProfileToJson(run->result.profile).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::string document = profile_text;
  if (authority_here) {
    auto signed_profile = proto::SignDocument(proto::DocumentType::kParameterProfile, profile_text, keys->authority);
    if (!signed_profile.ok()) return ConfigError(kSub, signed_profile.status());
    document = *signed_profile;
  }
  Status written = WriteFileReplacing(FLAGS_out, document);
  if (!written.ok()) return ConfigError(kSub, written);

  std::vector<std::string> selectors;
  for (const auto& d : node->devices) selectors.push_back(d.selector);
  const NodeProfile* np = node_profile ? &*node_profile : nullptr;
  if (FLAGS_json) {
    std::cout << ReportJson(*run, request, node->address, np, selectors).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
  } else {
    std::cout << ReportText(*run, request, node->address, np, selectors, keys->authority.public_key, authority_here)
              << "wrote " << FLAGS_out << std::endl;
  }
  return kExitOk;
}

const CliSubcommand& CalibrateSubcommand() {
  static const CliSubcommand kSubcommand = {"calibrate",
   "measure a node over the real path and write a calibrated parameter profile",
   "Runs two probe sessions against the node (docs/calibration.md): a round probe (the node's whole\n"
   "declared memory at a small m, --probe_rounds rounds of --labels_per_round labels per device) whose\n"
   "round times on the challenger's monotonic clock give the honest p99.9; then, at the m the deadline\n"
   "rule picks for --class, a fill probe whose fill time (order sent to report received) sets the fill\n"
   "deadline. deadline = p99.9 * (1 + --margin); m = the smallest power of two with\n"
   "1.5*m*c_node*t_min/safety >= deadline; R and labels per round from --target_fraction and\n"
   "--confidence for the node statement (all planned devices together); fill deadline = measured fill *\n"
   "(1 + --fill_slack), at least 1.2 x the measured fill. The node's signed profile (--node_profile,\n"
   "verified under the inventory's node key) can only make parameters stricter. Writes --out, only on\n"
   "success: signed by --authority_key (on a machine of the authority's), or, from the standing\n"
   "challenger with --delegation and --authority_pub (the authority's key stays offline), unsigned, for\n"
   "the authority to review and sign offline (wipeproof-challenger sign). Exit 0 written, 1 refused (no m\n"
   "up to --max_chunk_labels fits, the deadline is above --max_round_deadline_us, the planned statement\n"
   "misses --target_fraction, the class's safety factor is below 1.5, the node is too slow, or a probe\n"
   "failed: nothing written, the reason on stderr), 2 bad command line or configuration.",
   {"node",
    "inventory",
    "authority_key",
    "authority_pub",
    "delegation",
    "challenger_key",
    "out",
    "class",
    "classes",
    "format",
    "margin",
    "fill_slack",
    "target_fraction",
    "confidence",
    "labels_per_round",
    "max_chunk_labels",
    "max_fill_s",
    "max_round_deadline_us",
    "node_profile",
    "probe_chunk_labels",
    "probe_rounds",
    "probe_round_deadline_us",
    "probe_fill_deadline_s",
    "name",
    "ledger",
    "threads",
    "progress",
    "json",
    "connect_timeout_s", "round_channel"},
   &RunCalibrate,
   {{"node", "inventory name of the node to calibrate (required)"},
    {"out",
     "the parameter profile file to write (required): signed by --authority_key, or unsigned under --delegation "
     "(the authority signs it offline: wipeproof-challenger sign)"},
    {"authority_key",
     "authority secret key file (PREFIX-authority.key, mode 0600): signs the probe orders' delegation and the "
     "profile written; only on a machine of the authority's (or a lab). Or give --delegation and --authority_pub"},
    {"delegation",
     "the authority's delegation to --challenger_key, allowing unsigned profiles (the probe sessions' own): "
     "calibrate from the standing challenger without the authority's secret key"},
    {"authority_pub", "the authority's public key file (PREFIX-authority.pub), with --delegation"},
    {"challenger_key", kChallengerKeyHelp},
    {"class", "the adversary class to rule out (a name from --classes)"},
    {"ledger", "ledger database file (SQLite) to record the probe sessions in; optional (default: not recorded)"},
    {"json", "print the calibration report as JSON on stdout instead of the text"},
    {"node_profile",
     "the node's signed profile (wipeproof-prover bench --what=all --out=FILE), verified under the inventory's "
     "node key; optional, it can only tighten the parameters"}}};
  return kSubcommand;
}

}  // namespace wipeproof

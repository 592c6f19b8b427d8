// SelftestJson and SelftestMarkdown (selftest_runner.h).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "challenger/parameters/deadline_rule.h"
#include "challenger/session/failure.h"
#include "challenger/selftest/selftest_runner.h"
#include "common/numbers.h"

namespace wipeproof::selftest {

namespace {

using nlohmann::json;

std::string ExpectedName(proto::FailureReason r) {
  return r == proto::FailureReason::NONE ? "pass" : FailureReasonName(r);
}

}  // namespace

json SelftestJson(const SelftestResult& result) {
  const SelftestSetup& s = result.setup;
  json doc;
  doc["schema"] = "wipeproof-selftest/1";
  doc["command"] = "wipeproof-challenger selftest --adversaries --runs=" + std::to_string(result.options.runs) +
                   " --seed=" + std::to_string(result.options.seed);
  doc["runs_per_scenario"] = result.options.runs;
  doc["seed"] = result.options.seed;
  doc["confidence"] = result.options.confidence;
  doc["all_match"] = result.all_match;
  doc["wall_s"] = result.wall_s;
  const double floor_us =
      RecomputeFloorPs(s.chunk_labels, LabelFormat::kC1, s.t_min_ps, s.safety_factor) / 1e6;
  doc["setup"] = {
      {"chunk_labels", s.chunk_labels},
      {"format", "posedb-blake3-c1 (7e: posedb-blake3-192)"},
      {"device_chunks", s.device_chunks},
      {"device_bytes", s.device_chunks * s.chunk_labels * 32},
      {"gpu_allowed_reserve_bytes", s.gpu_reserve_bytes},
      {"rounds", s.rounds},
      {"labels_per_round", s.labels_per_round},
      {"round_deadline_us", s.round_deadline_us},
      {"honest_round_p999_us", s.honest_round_p999_us},
      {"sim_honest_round_us", s.timing.round_us},
      {"sim_fill_us", s.timing.fill_us},
      {"adversary_class", s.adversary_class},
      {"t_min_ps", s.t_min_ps},
      {"safety_factor", s.safety_factor},
      {"recompute_floor_us", floor_us},
      {"graph_depth", s.graph_depth},
      {"c_node", SequentialCompressionsPerNode(LabelFormat::kC1)},
      {"recompute_chunk_us", static_cast<double>(s.timing.recompute_chunk_ps) / 1e6},
      {"recompute_cores", s.timing.recompute_cores},
  };
  json scenarios = json::array();
  for (const ScenarioResult& r : result.scenarios) {
    const ScenarioSpec& sp = r.spec;
    json j;
    j["id"] = sp.id;
    j["adversary"] = sp.adversary;
    j["title"] = sp.title;
    j["description"] = sp.description;
    j["expected"] = ExpectedName(sp.expected);
    j["runs"] = r.runs;
    j["outcomes"] = r.outcomes;
    j["caught"] = r.caught;
    j["caught_by"] = r.caught > 0 ? json(FailureReasonName(sp.expected)) : json(nullptr);
    j["unexpected"] = r.unexpected;
    j["check_failures"] = r.check_failures;
    j["check_examples"] = r.check_examples;
    j["bounds_stated"] = r.bounds_stated;
    j["host_memory_not_in_plan"] = r.host_not_planned;
    if (sp.check == ScenarioCheck::kHostNotPlanned) j["host_memory_assumption_detail"] = r.host_assumption_detail;
    j["hidden_fraction"] = sp.f;
    j["challenged_labels_n"] = sp.n;
    j["n_meaning"] = sp.n_meaning;
    j["chunks"] = sp.chunks;
    j["hidden_chunks"] = sp.hidden;
    j["theoretical_rate"] = sp.theory;
    j["exact_rate"] = sp.exact;
    j["measured_rate"] = r.measured;
    j["cp_lower"] = r.cp_lower;
    j["cp_upper"] = r.cp_upper;
    j["matches"] = r.matches;
    j["judgement"] = r.verdict_text;
    j["example_failure"] = r.example_failure;
    j["wall_s"] = r.wall_s;
    if (sp.relay_link_us >= 0) {
      j["relay"] = {{"added_latency_us", sp.relay_link_us},
                    {"round_us", s.timing.round_us + sp.relay_link_us},
                    {"deadline_us", s.round_deadline_us}};
    }
    if (sp.deviation.kind == adversary::DeviationKind::kHideChunks && sp.deviation.hidden_answer == adversary::HiddenAnswer::kRecompute) {
      const double batch_us = static_cast<double>(s.timing.recompute_chunk_ps) / 1e6;
      j["recompute"] = {{"depth", s.graph_depth},
                        {"c_node", SequentialCompressionsPerNode(sp.format)},
                        {"t_min_ps", s.t_min_ps},
                        {"recompute_us", batch_us},
                        {"round_us_with_recompute", batch_us + static_cast<double>(s.timing.round_us)},
                        {"deadline_us", s.round_deadline_us},
                        {"hidden_chunks_challenged", r.seen.hidden_chunks_challenged},
                        {"max_round_charge_us", r.seen.max_round_recompute_us}};
    }
    if (sp.deviation.kind == adversary::DeviationKind::kRelocate) {
      j["relocation"] = {{"relocated_chunks", r.seen.relocated_chunks},
                         {"overwritten_chunks", r.seen.overwritten_chunks}};
    }
    if (sp.deviation.kind == adversary::DeviationKind::kRelocateToReserve) {
      j["relocation"] = {{"relocated_chunks", r.seen.relocated_chunks},
                         {"unlabeled_bytes_per_device", r.seen.unlabeled_bytes},
                         {"device_figure_understated_runs", r.device_figure_understated}};
    }
    if (sp.check == ScenarioCheck::kNoPartialChunk) j["partial_chunk_ranges"] = r.seen.partial_chunk_ranges;
    scenarios.push_back(j);
  }
  doc["scenarios"] = scenarios;
  // Adversary 8 (scaffold-storage depth, adversary/scaffold/): its own check fills this section.
  doc["scaffold"] = nullptr;
  return doc;
}

void AttachScaffold(json* doc, json scaffold) {
  const bool passed = scaffold.value("ok", false) && scaffold.value("passed", false);
  (*doc)["all_match"] = doc->value("all_match", false) && passed;
  (*doc)["scaffold"] = std::move(scaffold);
}

namespace {

// Adversary 8 in Markdown: per m, what the strongest stored sets achieved, then the exhaustive
// searches. The rows themselves stay in the JSON.
void RenderScaffold(const json& sc, std::ostream& out) {
  if (!sc.value("ok", false)) {
    out << "The experiments did not run: `" << sc.value("error", std::string("unknown error")) << "`\n";
    return;
  }
  out << "Claim checked (docs/scaffold-depth.md): " << sc.at("claim").get<std::string>() << "\n\n"
      << "**" << (sc.at("passed").get<bool>() ? "No stored set beat the outputs it replaces" : "VIOLATION")
      << "**: max gain " << sc.at("max_gain").dump() << " (gain = dropped outputs recomputable at a sequential depth under "
      << sc.at("threshold_rule").get<std::string>() << " sequential steps, minus the internal labels stored), "
      << sc.at("violations").get<uint64_t>() << " violation(s).\n\n";
  // Per m: rows, rows with fewer internal labels than dropped outputs, best gain, and the smallest
  // "deepest dropped output" among those rows (>= threshold means none got all outputs fast).
  struct PerM {
    uint64_t rows = 0, smaller = 0;
    int64_t max_gain = INT64_MIN;
    uint64_t min_max_depth = UINT64_MAX, threshold = 0;
  };
  std::map<uint64_t, PerM> per_m;
  for (const json& r : sc.at("rows")) {
    PerM& p = per_m[r.at("m").get<uint64_t>()];
    ++p.rows;
    p.threshold = r.at("threshold").get<uint64_t>();
    p.max_gain = std::max(p.max_gain, r.at("gain").get<int64_t>());
    if (r.at("scaffold_nodes").get<uint64_t>() < r.at("dropped_outputs").get<uint64_t>()) {
      ++p.smaller;
      p.min_max_depth = std::min(p.min_max_depth, r.at("max_dropped_depth").get<uint64_t>());
    }
  }
  out << "| m | rows (drop pattern x strategy x budget) | rows with fewer internal labels than dropped outputs | "
         "max gain | least max recompute depth in those rows | 1.5*m |\n|---|---|---|---|---|---|\n";
  for (const auto& [m, p] : per_m) {
    out << "| " << m << " | " << p.rows << " | " << p.smaller << " | " << p.max_gain << " | "
        << (p.smaller > 0 ? std::to_string(p.min_max_depth) : std::string("-")) << " | " << p.threshold << " |\n";
  }
  if (sc.contains("exhaustive") && !sc.at("exhaustive").empty()) {
    out << "\nExhaustive searches over every stored set up to a size:\n\n"
        << "| m | nodes | max set size | all sets | sets checked | max gain |\n|---|---|---|---|---|---|\n";
    for (const json& e : sc.at("exhaustive")) {
      out << "| " << e.at("m").dump() << " | " << e.at("nodes").dump() << " | " << e.at("max_set_size").dump() << " | "
          << (e.at("complete").get<bool>() ? "yes" : "no") << " | " << e.at("sets_checked").dump() << " | "
          << e.at("max_gain").dump() << " |\n";
    }
  }
  out << "\nEvidence on chosen sets beyond the complete searches, not a proof over all sets; full rows in the JSON "
         "(`scaffold.rows`).\n";
}

}  // namespace

StatusOr<bool> DocumentAllMatch(const json& doc) {
  try {
    bool all = true;
    for (const json& scenario : doc.at("scenarios")) all = all && scenario.at("matches").get<bool>();
    const json& scaffold = doc.at("scaffold");
    if (!scaffold.is_null()) all = all && scaffold.at("ok").get<bool>() && scaffold.at("passed").get<bool>();
    if (all != doc.at("all_match").get<bool>()) {
      return InvalidArgumentError("\"all_match\" contradicts the scenarios' \"matches\" and the scaffold's \"passed\"");
    }
    return all;
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("selftest JSON: ") + e.what());
  }
}

StatusOr<std::string> SelftestMarkdown(const json& doc) {
  WP_RETURN_IF_ERROR(DocumentAllMatch(doc).status());
  try {
    const json& s = doc.at("setup");
    std::ostringstream out;
    out << "# Security results: adversary selftest\n\n"
        << "Generated by `" << doc.at("command").get<std::string>()
        << " --json=... --markdown=...` (scripts/security-results.sh); do not edit by hand.\n"
        << "Every run is a whole wipe session: the real challenger (`SessionRunner`: signed order, fill report "
           "checks, timed rounds, signed verdict, transcript) against an in-process agent that speaks the real "
           "Cap'n Proto protocol over an in-memory pipe and departs from the honest agent in exactly one way "
           "(adversary/cheating_agent.h). Time is simulated (a fake clock charged by the agents), so "
           "deadline outcomes do not depend on the machine.\n\n";
    out << "**Result: " << (doc.at("all_match").get<bool>() ? "every outcome matches its expectation" : "MISMATCH")
        << "** (" << doc.at("runs_per_scenario").get<uint64_t>() << " runs per scenario, adversary seed "
        << doc.at("seed").get<uint64_t>() << ").\n\n";
    out << "## Setup\n\n"
        << "- One node (scenarios 10a and 10b: a complete wave of two, node-a the scenario's agent and an honest "
           "neighbour node-b of one GPU, each session on its own thread, event loop and simulated clock, kept in "
           "step as `serve` keeps a wave; node-b's fill report waits until node-a drops; 10c: a third party first "
           "sends a copy of the order to the agent served over TCP and TLS); each planned GPU holds " << s.at("device_chunks").get<uint64_t>()
        << " chunks of m = " << s.at("chunk_labels").get<uint64_t>() << " labels ("
        << s.at("device_bytes").get<uint64_t>() / 1024 << " KiB) plus an allowed reserve of "
        << s.at("gpu_allowed_reserve_bytes").get<uint64_t>() << " bytes.\n"
        << "- Profile: " << s.at("format").get<std::string>() << ", R = " << s.at("rounds").get<uint64_t>()
        << " rounds, q = " << s.at("labels_per_round").get<uint64_t>()
        << " labels per device per round, round deadline " << s.at("round_deadline_us").get<uint64_t>()
        << " us; calibrated for class " << s.at("adversary_class").get<std::string>() << " (t_min "
        << s.at("t_min_ps").get<uint64_t>() << " ps, safety " << s.at("safety_factor").get<double>()
        << "): recompute floor 1.5*m*c_node*t_min/safety = " << FormatFixed(s.at("recompute_floor_us").get<double>(), 2)
        << " us >= deadline; honest p99.9 " << s.at("honest_round_p999_us").get<uint64_t>() << " us.\n"
        << "- Simulated clock: an honest round costs " << s.at("sim_honest_round_us").get<int64_t>() << " us, a fill "
        << s.at("sim_fill_us").get<int64_t>() / 1000 << " ms. Recomputing hidden chunks "
        << "(1a) costs depth(m) x c_node x t_min = " << s.at("graph_depth").get<uint64_t>() << " x "
        << s.at("c_node").get<int>() << " x " << s.at("t_min_ps").get<uint64_t>()
        << " ps = " << FormatFixed(s.at("recompute_chunk_us").get<double>(), 2) << " us per batch of "
        << s.at("recompute_cores").get<uint64_t>() << " chunks (host cores), whatever the CI machine's cores.\n"
        << "- Theoretical detection rate: 1-(1-f)^N, f the fraction of the attacked device's chunks that are "
           "missing or wrong, N = q*R the labels challenged on that device in one session. The challenger "
           "draws a round's q chunks without replacement, so the exact rate 1-(C(C-h,q)/C(C,q))^R is a little "
           "higher; both are shown.\n"
        << "- Acceptance: every run passes or fails with the expected reason; the signed verdict verifies and "
           "agrees; rate-0 scenarios are never caught, rate-1 scenarios always; otherwise the one-sided "
        << FormatFixed(doc.at("confidence").get<double>() * 100, 0)
        << "% Clopper-Pearson upper bound of the measured rate is at least the theoretical rate.\n"
        << "- The profile and its class file are signed by the selftest's authority key, as `calibrate` and `sign` "
           "would sign them (scenarios 9a and 9b run without that signature); the challenger orders under the "
           "authority's delegation of that profile (9c: outside it).\n"
        << "- An adversary that escapes detection gets a passing verdict like an honest node; with R and q this "
           "small its stated bound, for the node's planned memory taken together, is loose (about a third of a "
           "device at 99%), so it still covers what was hidden. Real profiles choose R and q for a target "
           "fraction (docs/calibration.md).\n\n";
    out << "## Results\n\n"
        << "| id | adversary | expected | runs | outcomes | caught by | f | N | 1-(1-f)^N | exact | measured | CP "
        << FormatFixed(doc.at("confidence").get<double>() * 100, 0) << "% lower-upper | match |\n"
        << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const json& j : doc.at("scenarios")) {
      std::string outcomes;
      for (const auto& [name, count] : j.at("outcomes").items()) {
        outcomes += (outcomes.empty() ? "" : ", ") + name + " " + std::to_string(count.get<uint64_t>());
      }
      out << "| " << j.at("id").get<std::string>() << " | " << j.at("title").get<std::string>() << " | "
          << j.at("expected").get<std::string>() << " | " << j.at("runs").get<uint64_t>() << " | " << outcomes << " | "
          << (j.at("caught_by").is_null() ? "-" : j.at("caught_by").get<std::string>()) << " | "
          << FormatFixed(j.at("hidden_fraction").get<double>(), 4) << " | " << j.at("challenged_labels_n").get<uint64_t>()
          << " | " << FormatFixed(j.at("theoretical_rate").get<double>(), 4) << " | "
          << FormatFixed(j.at("exact_rate").get<double>(), 4) << " | " << FormatFixed(j.at("measured_rate").get<double>(), 4)
          << " | " << FormatFixed(j.at("cp_lower").get<double>(), 4) << "-" << FormatFixed(j.at("cp_upper").get<double>(), 4)
          << " | " << (j.at("matches").get<bool>() ? "yes" : "**NO**") << " |\n";
    }
    out << "\n## Scenarios\n\n";
    for (const json& j : doc.at("scenarios")) {
      out << "### " << j.at("id").get<std::string>() << ": " << j.at("title").get<std::string>() << "\n\n"
          << j.at("description").get<std::string>() << " Expected: " << j.at("expected").get<std::string>()
          << ". N: " << j.at("n_meaning").get<std::string>() << ". Judgement: " << j.at("judgement").get<std::string>()
          << ".\n";
      if (j.contains("recompute")) {
        const json& rc = j.at("recompute");
        out << "\nRecompute time " << rc.at("depth").get<uint64_t>() << " x " << rc.at("c_node").get<int>() << " x "
            << rc.at("t_min_ps").get<uint64_t>() << " ps = " << FormatFixed(rc.at("recompute_us").get<double>(), 2)
            << " us, plus the " << s.at("sim_honest_round_us").get<int64_t>()
            << " us round: " << FormatFixed(rc.at("round_us_with_recompute").get<double>(), 2) << " us against the "
            << rc.at("deadline_us").get<uint64_t>() << " us deadline ("
            << rc.at("hidden_chunks_challenged").get<uint64_t>()
            << " hidden chunks challenged over all runs; largest charge in one round "
            << rc.at("max_round_charge_us").get<uint64_t>() << " us).\n";
      }
      if (j.contains("relay")) {
        const json& rl = j.at("relay");
        out << "\nRound time " << rl.at("round_us").get<int64_t>() << " us ("
            << s.at("sim_honest_round_us").get<int64_t>() << " us honest + " << rl.at("added_latency_us").get<int64_t>()
            << " us relay) against the " << rl.at("deadline_us").get<uint64_t>() << " us deadline.\n";
      }
      if (j.contains("relocation")) {
        const json& rl = j.at("relocation");
        out << "\nChunks relocated over all runs: " << rl.at("relocated_chunks").get<uint64_t>();
        if (rl.contains("overwritten_chunks")) {
          out << "; host chunks overwritten for lack of room: " << rl.at("overwritten_chunks").get<uint64_t>();
        }
        if (rl.contains("device_figure_understated_runs")) {
          out << "; runs in which the per-device figure of the device the labels left (a diagnostic) was below "
                 "the bytes it kept unwiped: "
              << rl.at("device_figure_understated_runs").get<uint64_t>()
              << " (each run also checks that the stated bound covers every unlabeled byte of the node)";
        }
        out << ".\n";
      }
      if (j.contains("host_memory_assumption_detail")) {
        out << "\nVerdicts listing host-memory-in-plan as not held: " << j.at("host_memory_not_in_plan").get<uint64_t>()
            << " of " << j.at("runs").get<uint64_t>() << " (\""
            << j.at("host_memory_assumption_detail").get<std::string>() << "\").\n";
      }
      if (j.contains("partial_chunk_ranges")) {
        out << "\nPlanned ranges that were not whole chunks, over all runs: "
            << j.at("partial_chunk_ranges").get<uint64_t>() << ".\n";
      }
      if (j.at("bounds_stated").get<uint64_t>() > 0) {
        out << "\nPassing verdicts that state a bound: " << j.at("bounds_stated").get<uint64_t>() << ".\n";
      }
      if (!j.at("example_failure").get<std::string>().empty()) {
        out << "\nFirst failure: `" << j.at("example_failure").get<std::string>() << "`\n";
      }
      out << "\n";
    }
    out << "## Adversary 8: scaffold storage\n\n";
    if (doc.contains("scaffold") && !doc.at("scaffold").is_null()) {
      RenderScaffold(doc.at("scaffold"), out);
    } else {
      out << "Not run (`--scaffold_m=none`).\n";
    }
    return out.str();
  } catch (const json::exception& e) {
    return InvalidArgumentError(std::string("selftest JSON: ") + e.what());
  }
}

}  // namespace wipeproof::selftest

#include "adversary/scaffold/scaffold_report.h"

#include <cstdint>
#include <cstdio>

namespace wipeproof {

nlohmann::json ScaffoldReportToJson(const ScaffoldExperimentReport& report) {
  nlohmann::json j;
  j["adversary"] = "scaffold_storage";
  j["ok"] = true;
  j["claim"] =
      "no stored set makes more dropped outputs recomputable in < 1.5*m sequential nodes than it "
      "stores scaffold (non-output) labels: fast_dropped <= scaffold_nodes, checked on the "
      "strategies' chosen sets only (evidence, not a proof)";
  j["threshold_rule"] = "ceil(1.5*m) nodes";
  j["passed"] = report.violations == 0;
  // null when nothing was evaluated (no m and no exhaustive search in the options).
  j["max_gain"] = report.max_gain == INT64_MIN ? nlohmann::json() : nlohmann::json(report.max_gain);
  j["violations"] = report.violations;
  j["smaller_than_dropped_rows"] = report.smaller_than_dropped_rows;
  j["smaller_rows_all_fast"] = report.smaller_rows_all_fast;
  nlohmann::json rows = nlohmann::json::array();
  for (const ScaffoldExperimentRow& r : report.rows) {
    nlohmann::json row = {
        {"m", r.m},
        {"drop", r.drop},
        {"strategy", r.strategy},
        {"budget", r.budget},
        {"dropped_outputs", r.eval.dropped_outputs},
        {"kept_outputs", r.eval.kept_outputs},
        {"scaffold_nodes", r.eval.scaffold_nodes},
        {"fast_dropped", r.eval.fast_dropped},
        {"gain", r.eval.gain},
        {"threshold", r.eval.threshold},
        {"min_dropped_depth", r.eval.min_dropped_depth},
        {"max_dropped_depth", r.eval.max_dropped_depth},
        {"mean_dropped_depth", r.eval.mean_dropped_depth},
        {"full_min_depth", r.full_min_depth},
        {"full_max_depth", r.full_max_depth},
    };
    nlohmann::json by_factor = nlohmann::json::object();
    for (size_t i = 0; i < r.fast_by_factor.size(); ++i) {
      char key[16];
      std::snprintf(key, sizeof key, "%.2f", kScaffoldThresholdFactors[i]);
      by_factor[key] = r.fast_by_factor[i];
    }
    row["fast_by_threshold_factor"] = std::move(by_factor);
    if (r.eval.gain > 0) row["violation_scaffold_ids"] = r.violation_scaffold_ids;
    rows.push_back(std::move(row));
  }
  j["rows"] = std::move(rows);
  nlohmann::json exhaustive = nlohmann::json::array();
  for (const ExhaustiveScaffoldResult& e : report.exhaustive) {
    exhaustive.push_back({{"m", e.m},
                          {"nodes", e.nodes},
                          {"max_set_size", e.max_set_size},
                          {"complete", e.complete},
                          {"sets_checked", e.sets_checked},
                          {"max_gain", e.max_gain},
                          {"witness", e.witness}});
  }
  j["exhaustive"] = std::move(exhaustive);
  return j;
}

nlohmann::json ScaffoldExperimentsJson(const ScaffoldExperimentOptions& options) {
  StatusOr<ScaffoldExperimentReport> report = RunScaffoldExperiments(options);
  if (!report.ok()) {
    return {{"adversary", "scaffold_storage"}, {"ok", false}, {"error", report.status().message()}};
  }
  return ScaffoldReportToJson(*report);
}

}  // namespace wipeproof

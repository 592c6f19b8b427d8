// The scaffold-storage experiments as JSON, for `wipeproof-challenger selftest --adversaries`
// (issue #6 adversary 8). Kept out of wp_kernels (which must not need nlohmann-json, for the
// minimal GPU build): library wp_scaffold.
//
// JSON shape (ScaffoldExperimentsJson):
// {
//   "adversary": "scaffold_storage",
//   "ok": bool,                  // false: options were invalid, see "error"; nothing else is set
//   "error": string,             // only when ok is false
//   "claim": string,             // what is checked, in words
//   "threshold_rule": "ceil(1.5*m) nodes",
//   "passed": bool,              // no row had gain > 0
//   "max_gain": int or null,     // max over rows and searches of fast_dropped - scaffold_nodes
//   "violations": int,           // rows (and exhaustive searches) with gain > 0
//   "smaller_than_dropped_rows": int, "smaller_rows_all_fast": int,
//   "rows": [ { "m", "drop", "strategy", "budget",
//               "dropped_outputs" (k), "kept_outputs", "scaffold_nodes" (k'),
//               "fast_dropped", "gain", "threshold",
//               "min_dropped_depth", "max_dropped_depth", "mean_dropped_depth",
//               "full_min_depth", "full_max_depth",      // graph depth of the dropped outputs
//               "fast_by_threshold_factor": {"1.00": n, "1.25": n, "1.50": n, ...},
//                                       // dropped outputs with depth < ceil(f*m), per factor f
//               "violation_scaffold_ids": [node ids]     // only when gain > 0
//             } ],
//   "exhaustive": [ { "m", "nodes", "max_set_size", "complete" (all subsets checked),
//                     "sets_checked", "max_gain", "witness": [node ids reaching max_gain] } ]
// }
// Depths are in nodes (sequential compressions for c1). Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>

#include "adversary/scaffold/scaffold_experiments.h"

namespace wipeproof {

nlohmann::json ScaffoldExperimentsJson(const ScaffoldExperimentOptions& options);

// The rows' JSON for an already computed report (same fields as above).
nlohmann::json ScaffoldReportToJson(const ScaffoldExperimentReport& report);

}  // namespace wipeproof

// The scaffold-storage experiments (docs/scaffold-depth.md, issue #6 adversary 8): for each m, drop
// a pattern of outputs, let each strategy of scaffold_strategies.h store scaffold nodes under a
// budget, and evaluate the stored set with the checker of scaffold_depth.h against 1.5*m.
//
// What a run shows: for the stored sets tried, whether any made more dropped outputs fast
// (recompute depth < 1.5*m) than it stored scaffold labels (gain > 0). It is evidence on chosen
// sets, not a proof over all sets.
//
// Cost: O(rows * nodes) plus the strategies' passes (critical_path: up to 16 recompute rounds);
// m = 2^8 and 2^10 take about 0.5 s; 2^8..2^14 with the exhaustive searches of
// docs/scaffold-depth.md about 7 minutes on one loaded core, most of it the critical-path rounds.
// Memory: the DAG, 12 bytes per node (35 MiB at 2^14).
// Thread-safety: pure function of the options.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "adversary/scaffold/scaffold_depth.h"
#include "adversary/scaffold/scaffold_strategies.h"
#include "common/status.h"

namespace wipeproof {

// Thresholds, as multiples of m, at which each row also counts fast dropped outputs (the claim is
// about 1.5; the others show the margin around it).
constexpr double kScaffoldThresholdFactors[] = {1.0, 1.25, 1.5, 1.75, 2.0};

struct ScaffoldExperimentOptions {
  std::vector<uint32_t> m_values = {256, 1024, 4096};  // each a power of two in [4, 2^16]
  uint64_t seed = 0x5caff01dull;                       // random drops and random scaffold
  int critical_path_rounds = 16;                       // recompute rounds of kCriticalPath*
  uint32_t max_listed_ids = 256;                       // a row with gain > 0 lists its scaffold ids up to this many
  std::vector<ScaffoldStrategy> strategies;            // empty: AllScaffoldStrategies()
  // Exhaustive searches (ExhaustiveScaffoldSearch below) as (m, max_set_size): m = 2 and 4
  // complete, m = 8 all sets of up to 3 nodes (76,154 sets).
  std::vector<std::pair<uint32_t, uint32_t>> exhaustive = {{2, 6}, {4, 22}, {8, 3}};
};

// One drop pattern x strategy x budget.
struct ScaffoldExperimentRow {
  uint32_t m = 0;
  std::string drop;             // "random_k", "prefix_k", "suffix_k", "odd_ranks", "copy_a", "all"
  std::string strategy;         // ScaffoldStrategyName
  uint32_t budget = 0;          // scaffold labels allowed (structural cuts: their own size)
  uint32_t full_min_depth = 0;  // min / max graph depth (no stored set) of the dropped outputs
  uint32_t full_max_depth = 0;
  StoredSetEvaluation eval;                      // output_depth cleared
  std::vector<uint32_t> fast_by_factor;          // per kScaffoldThresholdFactors: dropped with depth < ceil(f*m)
  std::vector<uint32_t> violation_scaffold_ids;  // only when eval.gain > 0 (truncated)
};

// Exhaustive check on a tiny graph: every stored set S (outputs and internal nodes alike) with
// |S| <= max_set_size, evaluated against DeadlineDepth(m). With max_set_size >= node count it
// covers all sets, a proof for that m (m = 2: 6 nodes; m = 4: 22 nodes, 4 M sets).
struct ExhaustiveScaffoldResult {
  uint32_t m = 0;
  uint32_t nodes = 0;
  uint32_t max_set_size = 0;  // as searched (clamped to nodes)
  bool complete = false;      // every subset of the graph was checked
  uint64_t sets_checked = 0;
  int64_t max_gain = INT64_MIN;   // max over sets of fast_dropped - scaffold_nodes
  std::vector<uint32_t> witness;  // a set reaching max_gain (node ids)
};

struct ScaffoldExperimentReport {
  std::vector<ScaffoldExperimentRow> rows;
  std::vector<ExhaustiveScaffoldResult> exhaustive;  // one per options.exhaustive entry
  int64_t max_gain = INT64_MIN;                      // over all rows and exhaustive searches; the argument needs <= 0
  uint32_t violations = 0;                           // rows and exhaustive searches with gain > 0
  // Rows whose scaffold was strictly smaller than the dropped outputs (k' < k): the brief's claim
  // is that each still leaves some dropped output at depth >= 1.5*m.
  uint32_t smaller_than_dropped_rows = 0;
  uint32_t smaller_rows_all_fast = 0;  // of those, rows where every dropped output was fast
};

// Errors: InvalidArgument for an m that is not a power of two in [4, 2^16].
StatusOr<ScaffoldExperimentReport> RunScaffoldExperiments(const ScaffoldExperimentOptions& options);

// Errors: InvalidArgument unless m is a power of two in [2, 64] and the number of sets to check
// is at most 2^32.
StatusOr<ExhaustiveScaffoldResult> ExhaustiveScaffoldSearch(uint32_t m, uint32_t max_set_size);

}  // namespace wipeproof

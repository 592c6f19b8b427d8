#include "adversary/scaffold/scaffold_experiments.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

namespace wipeproof {
namespace {

struct DropPattern {
  std::string name;
  std::vector<uint32_t> ranks;
};

std::vector<DropPattern> DropPatterns(uint32_t m, uint64_t seed) {
  const uint32_t k = std::max<uint32_t>(2, m / 8);
  std::vector<DropPattern> out;
  std::vector<uint32_t> all(m);
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(seed ^ m);
  std::vector<uint32_t> shuffled = all;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  shuffled.resize(k);
  std::sort(shuffled.begin(), shuffled.end());
  out.push_back({"random_k", shuffled});
  out.push_back({"prefix_k", std::vector<uint32_t>(all.begin(), all.begin() + k)});
  out.push_back({"suffix_k", std::vector<uint32_t>(all.end() - k, all.end())});
  std::vector<uint32_t> odd;
  for (uint32_t r = 1; r < m; r += 2) odd.push_back(r);
  out.push_back({"odd_ranks", odd});  // every dropped output has kept neighbours
  out.push_back({"copy_a", std::vector<uint32_t>(all.begin(), all.begin() + m / 2)});
  out.push_back({"all", all});
  return out;
}

}  // namespace

StatusOr<ScaffoldExperimentReport> RunScaffoldExperiments(const ScaffoldExperimentOptions& options) {
  ScaffoldExperimentReport report;
  const std::vector<ScaffoldStrategy> strategies =
      options.strategies.empty() ? AllScaffoldStrategies() : options.strategies;
  for (uint32_t m : options.m_values) {
    if (m < 4 || m > (1u << 16) || (m & (m - 1)) != 0) {
      return InvalidArgumentError("scaffold experiments: m must be a power of two in [4, 65536], got " +
                                  std::to_string(m));
    }
    WP_ASSIGN_OR_RETURN(ChunkDag dag, BuildChunkDag(m));
    const uint32_t threshold = DeadlineDepth(m);
    for (const DropPattern& drop : DropPatterns(m, options.seed)) {
      const uint32_t k = static_cast<uint32_t>(drop.ranks.size());
      StrategyInput in;
      in.dag = &dag;
      in.stored.assign(dag.node_count(), 0);
      for (uint32_t id : dag.output_node) in.stored[id] = 1;
      uint32_t full_min = UINT32_MAX, full_max = 0;
      for (uint32_t r : drop.ranks) {
        const uint32_t id = dag.output_node[r];
        in.stored[id] = 0;
        full_min = std::min(full_min, dag.node_depth[id]);
        full_max = std::max(full_max, dag.node_depth[id]);
      }
      in.dropped = drop.ranks;
      in.threshold = threshold;
      in.max_rounds = options.critical_path_rounds;
      for (ScaffoldStrategy s : strategies) {
        const bool structural = IsStructuralStrategy(s);
        std::vector<uint32_t> budgets;
        if (s == ScaffoldStrategy::kNone || structural) {
          budgets = {0};
        } else {
          budgets = {k - 1, std::max<uint32_t>(1, k / 2), std::max<uint32_t>(1, k / 8)};
        }
        // Strategies that pick from one fixed order give, for a smaller budget, a prefix of the
        // larger budget's set: compute the largest once.
        const bool prefix_stable = s != ScaffoldStrategy::kCriticalPath;
        std::vector<uint32_t> largest;
        if (prefix_stable) {
          in.budget = budgets.front();
          in.seed = options.seed + m;
          largest = ChooseScaffold(s, in);
        }
        for (uint32_t budget : budgets) {
          in.budget = budget;
          in.seed = options.seed + m;
          std::vector<uint32_t> scaffold =
              prefix_stable
                  ? std::vector<uint32_t>(largest.begin(), largest.begin() + std::min<size_t>(budget, largest.size()))
                  : ChooseScaffold(s, in);
          if (structural) scaffold = largest;
          std::vector<uint8_t> stored = in.stored;
          for (uint32_t v : scaffold) stored[v] = 1;
          WP_ASSIGN_OR_RETURN(StoredSetEvaluation eval, EvaluateStoredSet(dag, stored, threshold));
          ScaffoldExperimentRow row;
          for (double f : kScaffoldThresholdFactors) {
            const uint32_t t = static_cast<uint32_t>(std::ceil(f * m));
            uint32_t fast = 0;
            for (uint32_t r : drop.ranks) fast += eval.output_depth[r] < t;
            row.fast_by_factor.push_back(fast);
          }
          eval.output_depth.clear();
          row.m = m;
          row.drop = drop.name;
          row.strategy = ScaffoldStrategyName(s);
          row.budget = structural ? static_cast<uint32_t>(scaffold.size()) : budget;
          row.full_min_depth = full_min;
          row.full_max_depth = full_max;
          row.eval = eval;
          if (eval.gain > 0) {
            ++report.violations;
            row.violation_scaffold_ids.assign(
                scaffold.begin(), scaffold.begin() + std::min<size_t>(scaffold.size(), options.max_listed_ids));
          }
          if (eval.scaffold_nodes < eval.dropped_outputs) {
            ++report.smaller_than_dropped_rows;
            if (eval.fast_dropped == eval.dropped_outputs) ++report.smaller_rows_all_fast;
          }
          report.max_gain = std::max(report.max_gain, eval.gain);
          report.rows.push_back(std::move(row));
        }
      }
    }
  }
  for (const auto& [m, size] : options.exhaustive) {
    WP_ASSIGN_OR_RETURN(ExhaustiveScaffoldResult r, ExhaustiveScaffoldSearch(m, size));
    report.max_gain = std::max(report.max_gain, r.max_gain);
    if (r.max_gain > 0) ++report.violations;
    report.exhaustive.push_back(std::move(r));
  }
  return report;
}

StatusOr<ExhaustiveScaffoldResult> ExhaustiveScaffoldSearch(uint32_t m, uint32_t max_set_size) {
  if (m < 2 || m > 64 || (m & (m - 1)) != 0) {
    return InvalidArgumentError("exhaustive scaffold search: m must be a power of two in [2, 64], got " +
                                std::to_string(m));
  }
  WP_ASSIGN_OR_RETURN(ChunkDag dag, BuildChunkDag(m));
  const uint32_t n = dag.node_count();
  ExhaustiveScaffoldResult result;
  result.m = m;
  result.nodes = n;
  result.max_set_size = std::min(max_set_size, n);
  result.complete = result.max_set_size == n;
  // Number of sets: sum of C(n, i), i <= max_set_size; refuse more than 2^32.
  uint64_t total = 0, c = 1;
  for (uint32_t i = 0; i <= result.max_set_size; ++i) {
    total += c;
    if (total > (1ull << 32)) {
      return InvalidArgumentError("exhaustive scaffold search: more than 2^32 sets");
    }
    c = c * (n - i) / (i + 1);
  }
  const uint32_t threshold = DeadlineDepth(m);
  std::vector<uint8_t> is_output(n, 0);
  for (uint32_t id : dag.output_node) is_output[id] = 1;
  std::vector<uint8_t> stored(n, 0);
  std::vector<uint32_t> depth(n);
  std::vector<uint32_t> set;
  auto evaluate = [&]() {
    ++result.sets_checked;
    int64_t scaffold = 0;
    for (uint32_t v : set) scaffold += !is_output[v];
    for (uint32_t v = 0; v < n; ++v) {
      if (stored[v]) {
        depth[v] = 0;
        continue;
      }
      uint32_t d = 0;
      if (dag.parent0[v] != kNoParent) d = depth[dag.parent0[v]];
      if (dag.parent1[v] != kNoParent) d = std::max(d, depth[dag.parent1[v]]);
      depth[v] = d + 1;
    }
    int64_t fast = 0;
    for (uint32_t id : dag.output_node) fast += !stored[id] && depth[id] < threshold;
    if (fast - scaffold > result.max_gain) {
      result.max_gain = fast - scaffold;
      result.witness = set;
    }
  };
  // Depth-first over combinations in increasing id order.
  struct Frame {
    uint32_t next;
  };
  evaluate();  // the empty set
  std::vector<Frame> stack = {{0}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next >= n || set.size() >= result.max_set_size) {
      stack.pop_back();
      if (!set.empty()) {
        stored[set.back()] = 0;
        set.pop_back();
      }
      continue;
    }
    const uint32_t v = f.next++;
    set.push_back(v);
    stored[v] = 1;
    evaluate();
    stack.push_back({v + 1});
  }
  return result;
}

}  // namespace wipeproof

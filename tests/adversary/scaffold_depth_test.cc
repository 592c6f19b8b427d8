// The scaffold-storage checker (adversary/scaffold/, docs/scaffold-depth.md): the explicit DAG
// against an independent transcription of label-spec.md §3 and against graph_metrics, the
// recompute-depth checker on hand-built DAGs and against an independent search, and the
// experiments' invariants for m up to 2^12.
// threat-model: T-SCAFFOLD
#include "adversary/scaffold/scaffold_depth.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "adversary/scaffold/scaffold_dag.h"
#include "adversary/scaffold/scaffold_experiments.h"
#include "adversary/scaffold/scaffold_report.h"
#include "adversary/scaffold/scaffold_strategies.h"
#include "kernels/graph_metrics.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace {

// label-spec.md §3 transcribed literally (emission order, list-valued procedures), written
// without the schedule: the reference the DAG must equal node for node.
class SpecGraph {
 public:
  std::vector<uint32_t> p0, p1, outputs;

  explicit SpecGraph(uint32_t m) {
    int n = 0;
    if (m > 1) {
      int bl = 0;
      for (uint32_t v = m - 1; v != 0; v >>= 1) ++bl;
      n = bl - 1;
    }
    const uint32_t half = 1u << n;
    std::vector<uint32_t> a = Standalone(n + 1);
    std::vector<uint32_t> b = Standalone(n + 1);
    outputs.assign(a.begin() + half, a.begin() + 2 * half);
    outputs.insert(outputs.end(), b.begin() + half, b.begin() + half + (m - half));
  }

 private:
  uint32_t Node(uint32_t a = kNoParent, uint32_t b = kNoParent) {
    p0.push_back(a);
    p1.push_back(b);
    return static_cast<uint32_t>(p0.size() - 1);
  }
  std::vector<uint32_t> Connector(int dim, const std::vector<uint32_t>& in) {
    const uint32_t w = 1u << dim;
    std::vector<uint32_t> prev(w);
    for (uint32_t i = 0; i < w; ++i) prev[i] = Node(in[i]);
    for (int layer = 0; layer < dim; ++layer) {
      const uint32_t bit = 1u << (dim - 1 - layer);
      std::vector<uint32_t> next(w);
      for (uint32_t i = 0; i < w; ++i) {
        next[i] = Node(prev[std::min(i, i ^ bit)], prev[std::max(i, i ^ bit)]);
      }
      prev = next;
    }
    return prev;
  }
  std::vector<uint32_t> Merged(int dim, const std::vector<uint32_t>& primary, const std::vector<uint32_t>& ingress) {
    if (dim == 0) {
      uint32_t x = Node(ingress[0]);
      return {Node(primary[0], x)};
    }
    const uint32_t w = 1u << dim;
    std::vector<uint32_t> ing(w), ctr(w);
    auto butterflies = [&](std::vector<uint32_t>& v) {
      for (int layer = 1; layer <= dim; ++layer) {
        const uint32_t bit = 1u << (dim - layer);
        std::vector<uint32_t> next(w);
        for (uint32_t i = 0; i < w; ++i) next[i] = Node(v[std::min(i, i ^ bit)], v[std::max(i, i ^ bit)]);
        v = next;
      }
    };
    for (uint32_t i = 0; i < w; ++i) ing[i] = Node(ingress[i]);
    butterflies(ing);
    for (uint32_t i = 0; i < w; ++i) ctr[i] = Node(primary[i], ing[i]);
    butterflies(ctr);
    return ctr;
  }
  std::vector<uint32_t> Standalone(int level) {
    if (level == 0) return {Node()};
    std::vector<uint32_t> left = Standalone(level - 1);
    std::vector<uint32_t> center = Connector(level - 1, left);
    std::vector<uint32_t> right = Connected(level - 1, 1u << (level - 1), center);
    left.insert(left.end(), right.begin(), right.end());
    return left;
  }
  std::vector<uint32_t> Connected(int level, uint32_t width, const std::vector<uint32_t>& in) {
    if (level == 0) return {Node(in[0])};
    const uint32_t h = width / 2;
    std::vector<uint32_t> left = Connected(level - 1, h, std::vector<uint32_t>(in.begin(), in.begin() + h));
    std::vector<uint32_t> center = Merged(level - 1, left, std::vector<uint32_t>(in.begin() + h, in.end()));
    std::vector<uint32_t> right = Connected(level - 1, h, center);
    left.insert(left.end(), right.begin(), right.end());
    return left;
  }
};

TEST(ChunkDag, EqualsSpecTranscriptionNodeForNode) {
  for (uint32_t m : {1u, 2u, 3u, 5u, 17u, 64u, 100u, 256u, 1024u}) {
    SpecGraph spec(m);
    StatusOr<ChunkDag> dag = BuildChunkDag(m);
    ASSERT_TRUE(dag.ok()) << m;
    // Non-powers of two (and m = 1, which needs no copy B): the DAG stops after the last output
    // (the labeler's truncation).
    ASSERT_LE(dag->node_count(), spec.p0.size()) << m;
    if (m > 1 && (m & (m - 1)) == 0) EXPECT_EQ(dag->node_count(), spec.p0.size()) << m;
    for (uint32_t v = 0; v < dag->node_count(); ++v) {
      ASSERT_EQ(dag->parent0[v], spec.p0[v]) << "m=" << m << " node " << v;
      ASSERT_EQ(dag->parent1[v], spec.p1[v]) << "m=" << m << " node " << v;
    }
    EXPECT_EQ(dag->output_node, spec.outputs) << m;
  }
}

TEST(ChunkDag, CountsAndDepthsMatchScheduleAndMetrics) {
  for (uint32_t m : {256u, 1024u, 4096u}) {
    StatusOr<ChunkDag> dag = BuildChunkDag(m);
    ASSERT_TRUE(dag.ok());
    GraphMetrics metrics = ComputeGraphMetrics(m);
    EXPECT_EQ(dag->node_count(), metrics.nodes) << m;
    // Edges from the schedule's op kinds alone: single 1 per node, merge and butterfly 2.
    uint64_t edges = 0;
    EmitGraphSchedule(m, m, [&](const GraphOp& op) {
      if (op.kind == GraphOpKind::kSingle) edges += op.width;
      if (op.kind == GraphOpKind::kMerge || op.kind == GraphOpKind::kButterfly) edges += 2ull * op.width;
    });
    EXPECT_EQ(dag->edge_count(), edges) << m;
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t id : dag->output_node) {
      lo = std::min(lo, dag->node_depth[id]);
      hi = std::max(hi, dag->node_depth[id]);
    }
    EXPECT_EQ(lo, metrics.min_output_depth) << m;
    EXPECT_EQ(hi, metrics.max_output_depth) << m;
    EXPECT_EQ(lo, DeadlineDepth(m)) << "spec §3: min output depth is exactly 1.5*m";
    // With nothing stored, the checker's depth is the graph depth.
    std::vector<uint8_t> none(dag->node_count(), 0);
    StatusOr<std::vector<uint32_t>> depth = RecomputeDepths(*dag, none);
    ASSERT_TRUE(depth.ok());
    EXPECT_EQ(*depth, dag->node_depth) << m;
  }
}

TEST(ChunkDag, RefusesOutOfRangeM) {
  EXPECT_EQ(BuildChunkDag(0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(BuildChunkDag(kMaxScaffoldDagLabels + 1).status().code(), StatusCode::kInvalidArgument);
}

// 0 -> 1 -> 2 -> 3 (output 0), 0 -> 4, {2, 4} -> 5 (output 1).
ChunkDag TinyDag() {
  ChunkDag d;
  d.m = 2;
  d.parent0 = {kNoParent, 0, 1, 2, 0, 2};
  d.parent1 = {kNoParent, kNoParent, kNoParent, kNoParent, kNoParent, 4};
  d.output_node = {3, 5};
  d.node_depth = {1, 2, 3, 4, 2, 4};
  return d;
}

TEST(ScaffoldDepth, HandBuiltDagKnownAnswers) {
  ChunkDag d = TinyDag();
  auto depths = [&](std::vector<uint8_t> stored) { return *RecomputeDepths(d, stored); };
  EXPECT_EQ(depths({0, 0, 0, 0, 0, 0}), (std::vector<uint32_t>{1, 2, 3, 4, 2, 4}));
  EXPECT_EQ(depths({0, 1, 0, 0, 0, 0}), (std::vector<uint32_t>{1, 0, 1, 2, 2, 3}));
  EXPECT_EQ(depths({0, 0, 1, 0, 0, 0}), (std::vector<uint32_t>{1, 2, 0, 1, 2, 3}));
  EXPECT_EQ(depths({0, 0, 1, 0, 1, 0}), (std::vector<uint32_t>{1, 2, 0, 1, 0, 1}));

  // Keep output 0 (node 3), store scaffold node 2, threshold 3: output 1 (node 5) has depth 3
  // (0 -> 4 -> 5): not fast.
  StatusOr<StoredSetEvaluation> e = EvaluateStoredSet(d, {0, 0, 1, 1, 0, 0}, 3);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->kept_outputs, 1u);
  EXPECT_EQ(e->dropped_outputs, 1u);
  EXPECT_EQ(e->scaffold_nodes, 1u);
  EXPECT_EQ(e->fast_dropped, 0u);
  EXPECT_EQ(e->gain, -1);
  EXPECT_EQ(e->output_depth, (std::vector<uint32_t>{0, 3}));
  // Scaffold {2, 4}, nothing kept, threshold 3: both outputs at depth 1 -> fast; gain 0.
  e = EvaluateStoredSet(d, {0, 0, 1, 0, 1, 0}, 3);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->dropped_outputs, 2u);
  EXPECT_EQ(e->fast_dropped, 2u);
  EXPECT_EQ(e->gain, 0);
  EXPECT_EQ(e->min_dropped_depth, 1u);
  EXPECT_EQ(e->max_dropped_depth, 1u);
  // Scaffold {1} alone makes both fast (depths 2 and 3 < 4) with one label: gain +1. The checker
  // reports a violation when there is one.
  e = EvaluateStoredSet(d, {0, 1, 0, 0, 0, 0}, 4);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->fast_dropped, 2u);
  EXPECT_EQ(e->gain, 1);

  // Heights to output 1 (node 5): 0 -> 4 -> 5 and 0 -> 1 -> 2 -> 5.
  StatusOr<std::vector<uint32_t>> h = HeightsToTargets(d, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 1});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(*h, (std::vector<uint32_t>{4, 3, 2, 0, 2, 1}));
  h = HeightsToTargets(d, {0, 0, 1, 0, 0, 0}, {0, 0, 0, 0, 0, 1});
  EXPECT_EQ(*h, (std::vector<uint32_t>{3, 0, 0, 0, 2, 1}));
}

TEST(ScaffoldDepth, RefusesWrongMaskSize) {
  ChunkDag d = TinyDag();
  EXPECT_EQ(RecomputeDepths(d, {0, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(EvaluateStoredSet(d, {}, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(HeightsToTargets(d, std::vector<uint8_t>(6, 0), {1}).status().code(), StatusCode::kInvalidArgument);
}

// Longest path ending at `v` avoiding stored nodes, by memoised depth-first search from v down
// (a different algorithm from the checker's forward pass).
uint32_t SearchDepth(const ChunkDag& d, const std::vector<uint8_t>& stored, uint32_t v, std::vector<int64_t>& memo) {
  std::vector<std::pair<uint32_t, int>> stack = {{v, 0}};
  while (!stack.empty()) {
    auto& [u, state] = stack.back();
    if (memo[u] >= 0) {
      stack.pop_back();
      continue;
    }
    if (stored[u]) {
      memo[u] = 0;
      stack.pop_back();
      continue;
    }
    const uint32_t ps[2] = {d.parent0[u], d.parent1[u]};
    if (state == 0) {
      state = 1;
      for (uint32_t p : ps) {
        if (p != kNoParent && memo[p] < 0) stack.push_back({p, 0});
      }
      continue;
    }
    int64_t best = 0;
    for (uint32_t p : ps) {
      if (p != kNoParent) best = std::max(best, memo[p]);
    }
    memo[u] = best + 1;
    stack.pop_back();
  }
  return static_cast<uint32_t>(memo[v]);
}

TEST(ScaffoldDepth, AllOutputsButOneAgreesWithSearch) {
  for (uint32_t m : {256u, 1024u}) {
    ChunkDag d = *BuildChunkDag(m);
    for (uint32_t r : {0u, 1u, m / 4 + 3, m / 2 - 1, m / 2, m - 1}) {
      std::vector<uint8_t> stored(d.node_count(), 0);
      for (uint32_t id : d.output_node) stored[id] = 1;
      stored[d.output_node[r]] = 0;
      StatusOr<StoredSetEvaluation> e = EvaluateStoredSet(d, stored, DeadlineDepth(m));
      ASSERT_TRUE(e.ok());
      std::vector<int64_t> memo(d.node_count(), -1);
      const uint32_t expected = SearchDepth(d, stored, d.output_node[r], memo);
      EXPECT_EQ(e->output_depth[r], expected) << "m=" << m << " r=" << r;
      EXPECT_EQ(e->dropped_outputs, 1u);
      EXPECT_EQ(e->kept_outputs, m - 1);
      EXPECT_EQ(e->scaffold_nodes, 0u);
      // Keeping every other output does not bring a dropped one under 1.5*m.
      EXPECT_GE(expected, DeadlineDepth(m)) << "m=" << m << " r=" << r;
    }
  }
}

TEST(ScaffoldStrategies, ReturnDistinctNonOutputNodesWithinBudget) {
  ChunkDag d = *BuildChunkDag(256);
  std::vector<uint8_t> is_output(d.node_count(), 0);
  for (uint32_t id : d.output_node) is_output[id] = 1;
  StrategyInput in;
  in.dag = &d;
  in.stored.assign(d.node_count(), 0);
  for (uint32_t r = 0; r < 64; ++r) in.dropped.push_back(r);
  for (uint32_t r = 64; r < 256; ++r) in.stored[d.output_node[r]] = 1;
  in.budget = 40;
  in.threshold = DeadlineDepth(256);
  in.seed = 7;
  for (ScaffoldStrategy s : AllScaffoldStrategies()) {
    std::vector<uint32_t> ids = ChooseScaffold(s, in);
    if (!IsStructuralStrategy(s)) EXPECT_LE(ids.size(), 40u) << ScaffoldStrategyName(s);
    std::vector<uint32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << ScaffoldStrategyName(s);
    for (uint32_t v : ids) {
      ASSERT_LT(v, d.node_count());
      EXPECT_FALSE(is_output[v]) << ScaffoldStrategyName(s);
    }
  }
  // The structural cut of copy A: the right half of standalone(n)'s base, m/4 nodes.
  EXPECT_EQ(ChooseScaffold(ScaffoldStrategy::kStandaloneRightCut, in).size(), 64u);
  EXPECT_EQ(ChooseScaffold(ScaffoldStrategy::kStandaloneRightCut2, in).size(), 96u);
  EXPECT_EQ(ChooseScaffold(ScaffoldStrategy::kPredecessors, in).size(), 40u);
  EXPECT_TRUE(ChooseScaffold(ScaffoldStrategy::kNone, in).empty());
}

// The structural cut at m = 4096 is exactly tight: m/2 scaffold labels make exactly m/2 of the
// dropped outputs fast (gain 0), and the first output it misses sits at depth exactly 1.5*m.
TEST(ScaffoldExperiments, StructuralCutIsTightAt4096) {
  const uint32_t m = 4096;
  ChunkDag d = *BuildChunkDag(m);
  StrategyInput in;
  in.dag = &d;
  in.stored.assign(d.node_count(), 0);
  for (uint32_t r = 0; r < m; ++r) in.dropped.push_back(r);
  in.threshold = DeadlineDepth(m);
  std::vector<uint32_t> cut = ChooseScaffold(ScaffoldStrategy::kStandaloneRightCut, in);
  ASSERT_EQ(cut.size(), m / 2);
  std::vector<uint8_t> stored(d.node_count(), 0);
  for (uint32_t v : cut) stored[v] = 1;
  StoredSetEvaluation e = *EvaluateStoredSet(d, stored, DeadlineDepth(m));
  EXPECT_EQ(e.scaffold_nodes, m / 2);
  EXPECT_EQ(e.fast_dropped, m / 2);
  EXPECT_EQ(e.gain, 0);
  uint32_t slow_min = UINT32_MAX;
  for (uint32_t r = 0; r < m; ++r) {
    if (e.output_depth[r] >= e.threshold) slow_min = std::min(slow_min, e.output_depth[r]);
  }
  EXPECT_EQ(slow_min, DeadlineDepth(m));
}

TEST(ScaffoldExperiments, NoStrategyBeatsOutputStorageUpTo1024) {
  ScaffoldExperimentOptions options;
  options.m_values = {256, 1024};
  options.exhaustive = {{2, 6}, {8, 2}};  // the full searches have their own test
  StatusOr<ScaffoldExperimentReport> report = RunScaffoldExperiments(options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->violations, 0u);
  EXPECT_LE(report->max_gain, 0);
  EXPECT_GT(report->smaller_than_dropped_rows, 0u);
  EXPECT_EQ(report->smaller_rows_all_fast, 0u);
  // 2 sizes x 6 drop patterns x (none + 6 budgeted strategies x 3 budgets + 3 structural).
  EXPECT_EQ(report->rows.size(), 2u * 6 * (1 + 6 * 3 + 3));
  ASSERT_EQ(report->exhaustive.size(), 2u);
  for (const ExhaustiveScaffoldResult& e : report->exhaustive) EXPECT_EQ(e.max_gain, 0) << e.m;
  for (const ScaffoldExperimentRow& row : report->rows) {
    SCOPED_TRACE(row.drop + "/" + row.strategy + " m=" + std::to_string(row.m));
    EXPECT_EQ(row.eval.threshold, row.m * 3 / 2);
    EXPECT_EQ(row.eval.kept_outputs + row.eval.dropped_outputs, row.m);
    EXPECT_LE(row.eval.fast_dropped, row.eval.scaffold_nodes);
    if (row.strategy == "none") {
      EXPECT_EQ(row.eval.fast_dropped, 0u);
      EXPECT_GE(row.eval.min_dropped_depth, row.m * 3 / 2);
    }
    // One parent per output: storing it is the one-for-one baseline, exactly tight.
    if (row.strategy == "predecessors") EXPECT_EQ(row.eval.gain, 0);
    if (row.strategy == "standalone_right_cut" && (row.drop == "copy_a" || row.drop == "all")) {
      EXPECT_EQ(row.eval.gain, 0);
      EXPECT_EQ(row.eval.scaffold_nodes, row.eval.dropped_outputs / 2);
    }
    // The cut plus critical-path repair brings every dropped output under 1.5*m, but it pays one
    // label per output for it.
    if (row.strategy == "right_cut_then_critical_path" && (row.drop == "copy_a" || row.drop == "all")) {
      EXPECT_EQ(row.eval.fast_dropped, row.eval.dropped_outputs);
      EXPECT_EQ(row.eval.gain, 0);
    }
  }
}

// m = 2^12 with the strategies that cost one or a few passes (critical_path's recompute rounds
// are left to the doc run, docs/scaffold-depth.md).
TEST(ScaffoldExperiments, NoCheapStrategyBeatsOutputStorageAt4096) {
  ScaffoldExperimentOptions options;
  options.m_values = {4096};
  options.exhaustive = {};
  options.strategies = {ScaffoldStrategy::kNone,
                        ScaffoldStrategy::kRandom,
                        ScaffoldStrategy::kPredecessors,
                        ScaffoldStrategy::kMaxDescendants,
                        ScaffoldStrategy::kTopLayers,
                        ScaffoldStrategy::kEveryJthLayer,
                        ScaffoldStrategy::kStandaloneRightCut,
                        ScaffoldStrategy::kStandaloneRightCut2};
  StatusOr<ScaffoldExperimentReport> report = RunScaffoldExperiments(options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->rows.size(), 6u * (1 + 5 * 3 + 2));
  EXPECT_EQ(report->violations, 0u);
  EXPECT_EQ(report->max_gain, 0);
  EXPECT_EQ(report->smaller_rows_all_fast, 0u);
}

TEST(ScaffoldExperiments, JsonCarriesTheVerdictAndRefusesBadOptions) {
  ScaffoldExperimentOptions options;
  options.m_values = {256};
  options.strategies = {ScaffoldStrategy::kNone, ScaffoldStrategy::kPredecessors};
  options.exhaustive = {{2, 6}};
  nlohmann::json j = ScaffoldExperimentsJson(options);
  EXPECT_EQ(j["adversary"], "scaffold_storage");
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["passed"], true);
  EXPECT_EQ(j["max_gain"], 0);
  ASSERT_EQ(j["rows"].size(), 6u * (1 + 3));
  const nlohmann::json& row = j["rows"][1];
  EXPECT_EQ(row["strategy"], "predecessors");
  EXPECT_EQ(row["threshold"], 384);
  EXPECT_EQ(row["fast_dropped"], row["scaffold_nodes"]);
  EXPECT_TRUE(row.contains("fast_by_threshold_factor"));
  EXPECT_FALSE(row.contains("violation_scaffold_ids"));
  ASSERT_EQ(j["exhaustive"].size(), 1u);
  EXPECT_EQ(j["exhaustive"][0]["complete"], true);
  EXPECT_EQ(j["exhaustive"][0]["max_gain"], 0);

  options.m_values = {100};
  nlohmann::json bad = ScaffoldExperimentsJson(options);
  EXPECT_EQ(bad["ok"], false);
  EXPECT_NE(bad["error"].get<std::string>().find("power of two"), std::string::npos);
}

// m = 2 and m = 4 over every subset of their graphs (6 and 22 nodes): no stored set, whatever
// mix of outputs and internal nodes, has gain > 0. The maximum is 0 (the empty set, or storing
// one output's parent).
TEST(ScaffoldExhaustive, NoSetBeatsOutputStorageForTinyGraphs) {
  StatusOr<ExhaustiveScaffoldResult> m2 = ExhaustiveScaffoldSearch(2, 100);
  ASSERT_TRUE(m2.ok());
  EXPECT_TRUE(m2->complete);
  EXPECT_EQ(m2->nodes, 6u);
  EXPECT_EQ(m2->sets_checked, 64u);
  EXPECT_EQ(m2->max_gain, 0);
  StatusOr<ExhaustiveScaffoldResult> m4 = ExhaustiveScaffoldSearch(4, 22);
  ASSERT_TRUE(m4.ok());
  EXPECT_TRUE(m4->complete);
  EXPECT_EQ(m4->nodes, 22u);
  EXPECT_EQ(m4->sets_checked, 1u << 22);
  EXPECT_EQ(m4->max_gain, 0);
  StatusOr<ExhaustiveScaffoldResult> m8 = ExhaustiveScaffoldSearch(8, 3);
  ASSERT_TRUE(m8.ok());
  EXPECT_FALSE(m8->complete);
  EXPECT_EQ(m8->nodes, 78u);
  EXPECT_EQ(m8->sets_checked, 1u + 78 + 3003 + 76076);
  EXPECT_EQ(m8->max_gain, 0);
  EXPECT_EQ(ExhaustiveScaffoldSearch(6, 3).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ExhaustiveScaffoldSearch(64, 64).status().code(), StatusCode::kInvalidArgument);
}

// The checker can see a violation: with the threshold raised to 1.75*m, the structural cut makes
// more outputs fast than it stores (gain > 0), so gain <= 0 at 1.5*m is a property of the graph
// at that threshold, not of the measurement.
TEST(ScaffoldExperiments, StructuralCutWinsAboveTheThreshold) {
  const uint32_t m = 1024;
  ChunkDag d = *BuildChunkDag(m);
  StrategyInput in;
  in.dag = &d;
  in.stored.assign(d.node_count(), 0);
  for (uint32_t r = 0; r < m; ++r) in.dropped.push_back(r);
  std::vector<uint8_t> stored(d.node_count(), 0);
  for (uint32_t v : ChooseScaffold(ScaffoldStrategy::kStandaloneRightCut, in)) stored[v] = 1;
  StoredSetEvaluation e = *EvaluateStoredSet(d, stored, m * 7 / 4);
  EXPECT_EQ(e.scaffold_nodes, 512u);
  EXPECT_GT(e.gain, 0);
}

}  // namespace
}  // namespace wipeproof

// The graph schedule and its metrics against label-spec.md §3.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/graph_metrics.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace {

// The spec's table: m, nodes, nodes per output, min output depth.
struct SpecRow {
  uint32_t m;
  uint64_t nodes;
  double per_output;
  uint64_t min_depth;
};

TEST(GraphMetrics, ReproducesSpecTable) {
  const SpecRow rows[] = {{1024, 96254, 94.0, 1536},
                          {4096, 557054, 136.0, 6144},
                          {16384, 3047422, 186.0, 24576},
                          {131072, 36175870, 276.0, 196608}};
  for (const SpecRow& row : rows) {
    GraphMetrics g = ComputeGraphMetrics(row.m);
    EXPECT_EQ(g.nodes, row.nodes) << "m=" << row.m;
    EXPECT_NEAR(g.nodes_per_output, row.per_output, 0.05) << "m=" << row.m;
    EXPECT_EQ(g.min_output_depth, row.min_depth) << "m=" << row.m;
    EXPECT_EQ(g.nodes_hashed, row.nodes) << "powers of two need all of copy B";
    EXPECT_EQ(g.peak_live_labels, row.m) << "scratch is 2*half, = m for powers of two";
  }
  // 2^20 from the recurrence alone (the replay is exercised above).
  EXPECT_EQ(2 * StandaloneNodeCount(ShapeForChunkLabels(1u << 20).level), 402653182ull);
}

TEST(GraphSchedule, ShapeFollowsSpec) {
  GraphShape s1 = ShapeForChunkLabels(1);
  EXPECT_EQ(s1.n, 0);
  EXPECT_EQ(s1.half, 1u);
  GraphShape s3 = ShapeForChunkLabels(3);
  EXPECT_EQ(s3.n, 1);
  EXPECT_EQ(s3.half, 2u);
  GraphShape s1000 = ShapeForChunkLabels(1000);
  EXPECT_EQ(s1000.n, 9);
  EXPECT_EQ(s1000.half, 512u);
  EXPECT_EQ(s1000.scratch_labels, 1024u);
}

// Every node number is emitted once, consecutively; each op stays inside the scratch; the
// outputs cover ranks 0..m-1 exactly once.
TEST(GraphSchedule, NumbersNodesConsecutivelyAndCoversOutputs) {
  for (uint32_t m : {1u, 2u, 3u, 5u, 17u, 64u, 1000u, 4096u}) {
    GraphShape shape = ShapeForChunkLabels(m);
    uint64_t next = 0;
    std::vector<int> rank_seen(m, 0);
    EmitGraphSchedule(m, m, [&](const GraphOp& op) {
      if (op.kind == GraphOpKind::kOutput) {
        for (uint32_t i = 0; i < op.width; ++i) ++rank_seen[op.node_base + i];
        EXPECT_LE(op.src + op.width, shape.scratch_labels);
        return;
      }
      EXPECT_EQ(op.node_base, next) << "m=" << m;
      EXPECT_EQ(op.width, 1u << op.log_width);
      EXPECT_LE(op.dst + op.width, shape.scratch_labels);
      EXPECT_LE(op.src + op.width, shape.scratch_labels);
      next += op.width;
    });
    for (uint32_t r = 0; r < m; ++r) EXPECT_EQ(rank_seen[r], 1) << "m=" << m << " rank " << r;
    // Powers of two above 1 need all of copy B; m = 1 needs none of it (its one output is in A).
    if (m > 1 && (m & (m - 1)) == 0) EXPECT_EQ(next, shape.total_nodes) << "m=" << m;
    else EXPECT_LT(next, shape.total_nodes) << "m=" << m;
  }
}

// Truncating the schedule to the first k ranks emits a prefix of the full schedule.
TEST(GraphSchedule, TruncatedScheduleIsAPrefix) {
  std::vector<GraphOp> full = BuildGraphProgram(1000, 1000);
  std::vector<GraphOp> part = BuildGraphProgram(1000, 700);
  size_t j = 0;
  for (const GraphOp& op : part) {
    if (op.kind == GraphOpKind::kOutput) continue;
    while (full[j].kind == GraphOpKind::kOutput) ++j;
    EXPECT_EQ(op.node_base, full[j].node_base);
    EXPECT_EQ(op.kind, full[j].kind);
    ++j;
  }
  EXPECT_LT(part.size(), full.size());
}

}  // namespace
}  // namespace wipeproof

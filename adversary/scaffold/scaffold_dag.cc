#include "adversary/scaffold/scaffold_dag.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "kernels/graph_schedule.h"

namespace wipeproof {

uint64_t ChunkDag::edge_count() const {
  uint64_t edges = 0;
  for (size_t v = 0; v < parent0.size(); ++v) {
    edges += (parent0[v] != kNoParent) + (parent1[v] != kNoParent);
  }
  return edges;
}

StatusOr<ChunkDag> BuildChunkDag(uint32_t m) {
  if (m < 1 || m > kMaxScaffoldDagLabels) {
    return InvalidArgumentError("chunk DAG: m must be in [1, " + std::to_string(kMaxScaffoldDagLabels) + "], got " +
                                std::to_string(m));
  }
  const GraphShape shape = ShapeForChunkLabels(m);
  ChunkDag dag;
  dag.m = m;
  dag.parent0.reserve(shape.total_nodes);
  dag.parent1.reserve(shape.total_nodes);
  dag.node_depth.reserve(shape.total_nodes);
  dag.output_node.assign(m, kNoParent);
  // slot -> id of the node whose label the labeler would hold there.
  std::vector<uint32_t> slot(shape.scratch_labels, kNoParent);
  auto emit = [&dag](uint32_t p0, uint32_t p1) {
    uint32_t d = 1;
    if (p0 != kNoParent) d = std::max(d, dag.node_depth[p0] + 1);
    if (p1 != kNoParent) d = std::max(d, dag.node_depth[p1] + 1);
    dag.parent0.push_back(p0);
    dag.parent1.push_back(p1);
    dag.node_depth.push_back(d);
  };
  EmitGraphSchedule(m, m, [&](const GraphOp& op) {
    const uint32_t w = op.width;
    const uint32_t base = static_cast<uint32_t>(op.node_base);
    if (op.kind != GraphOpKind::kOutput) {
      // The schedule numbers nodes consecutively; the DAG's ids are its positions.
      assert(base == dag.parent0.size());
    }
    switch (op.kind) {
      case GraphOpKind::kSource:
        emit(kNoParent, kNoParent);
        slot[op.dst] = base;
        break;
      case GraphOpKind::kSingle:
        for (uint32_t i = 0; i < w; ++i) emit(slot[op.src + i], kNoParent);
        for (uint32_t i = 0; i < w; ++i) slot[op.dst + i] = base + i;
        break;
      case GraphOpKind::kMerge:
        for (uint32_t i = 0; i < w; ++i) emit(slot[op.src + i], slot[op.dst + i]);
        for (uint32_t i = 0; i < w; ++i) slot[op.dst + i] = base + i;
        break;
      case GraphOpKind::kButterfly: {
        // node(prev[i], prev[i ^ bit]) with the lower position first (spec §3: pred0 < pred1).
        const uint32_t bit = 1u << op.log_bit;
        for (uint32_t i = 0; i < w; ++i) {
          const uint32_t lo = std::min(i, i ^ bit), hi = std::max(i, i ^ bit);
          emit(slot[op.dst + lo], slot[op.dst + hi]);
        }
        for (uint32_t i = 0; i < w; ++i) slot[op.dst + i] = base + i;
        break;
      }
      case GraphOpKind::kOutput:
        for (uint32_t i = 0; i < w; ++i) dag.output_node[op.node_base + i] = slot[op.src + i];
        break;
    }
  });
  return dag;
}

}  // namespace wipeproof

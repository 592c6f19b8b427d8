#include "kernels/graph_metrics.h"

#include <algorithm>
#include <vector>

#include "kernels/graph_schedule.h"

namespace wipeproof {

GraphMetrics ComputeGraphMetrics(uint32_t m) {
  GraphShape shape = ShapeForChunkLabels(m);
  GraphMetrics g;
  g.m = m;
  g.nodes = shape.total_nodes;
  g.nodes_per_output = static_cast<double>(shape.total_nodes) / m;
  g.peak_live_labels = shape.scratch_labels;
  g.min_output_depth = UINT64_MAX;
  // Depth of the node in each slot, updated exactly as the labeler updates labels.
  std::vector<uint32_t> depth(shape.scratch_labels, 0);
  EmitGraphSchedule(m, m, [&](const GraphOp& op) {
    ++g.schedule_ops;
    const uint32_t w = op.width;
    switch (op.kind) {
      case GraphOpKind::kSource:
        depth[op.dst] = 1;
        break;
      case GraphOpKind::kSingle:
        for (uint32_t i = 0; i < w; ++i) depth[op.dst + i] = depth[op.src + i] + 1;
        break;
      case GraphOpKind::kMerge:
        for (uint32_t i = 0; i < w; ++i) depth[op.dst + i] = std::max(depth[op.src + i], depth[op.dst + i]) + 1;
        break;
      case GraphOpKind::kButterfly: {
        const uint32_t bit = 1u << op.log_bit;
        for (uint32_t i = 0; i < w; ++i) {
          if (i & bit) continue;
          uint32_t d = std::max(depth[op.dst + i], depth[op.dst + i + bit]) + 1;
          depth[op.dst + i] = depth[op.dst + i + bit] = d;
        }
        break;
      }
      case GraphOpKind::kOutput:
        for (uint32_t i = 0; i < w; ++i) {
          g.min_output_depth = std::min<uint64_t>(g.min_output_depth, depth[op.src + i]);
          g.max_output_depth = std::max<uint64_t>(g.max_output_depth, depth[op.src + i]);
        }
        return;
    }
    g.nodes_hashed += w;
  });
  return g;
}

}  // namespace wipeproof

#include "adversary/scaffold/scaffold_depth.h"

#include <algorithm>
#include <string>

namespace wipeproof {
namespace {

Status CheckMask(const ChunkDag& dag, const std::vector<uint8_t>& mask, const char* what) {
  if (mask.size() != dag.node_count()) {
    return InvalidArgumentError(std::string("scaffold depth: ") + what + " has " + std::to_string(mask.size()) +
                                " entries, the graph has " + std::to_string(dag.node_count()) + " nodes");
  }
  return Status::Ok();
}

}  // namespace

uint32_t DeadlineDepth(uint32_t m) { return static_cast<uint32_t>((3ull * m + 1) / 2); }

StatusOr<std::vector<uint32_t>> RecomputeDepths(const ChunkDag& dag, const std::vector<uint8_t>& stored) {
  WP_RETURN_IF_ERROR(CheckMask(dag, stored, "stored set"));
  const uint32_t n = dag.node_count();
  std::vector<uint32_t> depth(n);
  for (uint32_t v = 0; v < n; ++v) {
    if (stored[v]) {
      depth[v] = 0;
      continue;
    }
    uint32_t d = 0;
    const uint32_t p0 = dag.parent0[v], p1 = dag.parent1[v];
    if (p0 != kNoParent) d = depth[p0];
    if (p1 != kNoParent) d = std::max(d, depth[p1]);
    depth[v] = d + 1;
  }
  return depth;
}

StatusOr<StoredSetEvaluation> EvaluateStoredSet(const ChunkDag& dag, const std::vector<uint8_t>& stored,
                                                uint32_t threshold) {
  WP_ASSIGN_OR_RETURN(std::vector<uint32_t> depth, RecomputeDepths(dag, stored));
  StoredSetEvaluation e;
  e.threshold = threshold;
  e.output_depth.assign(dag.m, 0);
  std::vector<uint8_t> is_output(dag.node_count(), 0);
  for (uint32_t id : dag.output_node) is_output[id] = 1;
  for (uint32_t v = 0; v < dag.node_count(); ++v) {
    if (stored[v] && !is_output[v]) ++e.scaffold_nodes;
  }
  uint64_t sum = 0;
  e.min_dropped_depth = UINT32_MAX;
  for (uint32_t r = 0; r < dag.m; ++r) {
    const uint32_t id = dag.output_node[r];
    if (stored[id]) {
      ++e.kept_outputs;
      continue;
    }
    const uint32_t d = depth[id];
    e.output_depth[r] = d;
    ++e.dropped_outputs;
    if (d < threshold) ++e.fast_dropped;
    e.min_dropped_depth = std::min(e.min_dropped_depth, d);
    e.max_dropped_depth = std::max(e.max_dropped_depth, d);
    sum += d;
  }
  if (e.dropped_outputs == 0) e.min_dropped_depth = 0;
  e.mean_dropped_depth = e.dropped_outputs ? static_cast<double>(sum) / e.dropped_outputs : 0.0;
  e.gain = static_cast<int64_t>(e.fast_dropped) - static_cast<int64_t>(e.scaffold_nodes);
  return e;
}

StatusOr<std::vector<uint32_t>> HeightsToTargets(const ChunkDag& dag, const std::vector<uint8_t>& stored,
                                                 const std::vector<uint8_t>& target) {
  WP_RETURN_IF_ERROR(CheckMask(dag, stored, "stored set"));
  WP_RETURN_IF_ERROR(CheckMask(dag, target, "target set"));
  const uint32_t n = dag.node_count();
  std::vector<uint32_t> height(n, 0);
  // Children have larger ids, so a descending pass sees a node's final height before pushing it
  // to its parents.
  for (uint32_t v = n; v-- > 0;) {
    if (stored[v]) {
      height[v] = 0;
      continue;
    }
    if (target[v]) height[v] = std::max<uint32_t>(height[v], 1);
    if (height[v] == 0) continue;
    const uint32_t up = height[v] + 1;
    const uint32_t p0 = dag.parent0[v], p1 = dag.parent1[v];
    if (p0 != kNoParent) height[p0] = std::max(height[p0], up);
    if (p1 != kNoParent) height[p1] = std::max(height[p1], up);
  }
  return height;
}

}  // namespace wipeproof

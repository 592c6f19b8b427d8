#include "adversary/scaffold/scaffold_strategies.h"

#include <algorithm>
#include <cassert>
#include <random>
#include <utility>

#include "adversary/scaffold/scaffold_depth.h"
#include "kernels/graph_schedule.h"

namespace wipeproof {
namespace {

// Collects ids, skipping outputs, stored nodes and repeats, up to the budget.
class Picker {
 public:
  Picker(const StrategyInput& in, uint32_t budget)
      : stored_(in.stored), is_output_(in.dag->node_count(), 0), budget_(budget) {
    for (uint32_t id : in.dag->output_node) is_output_[id] = 1;
  }
  bool full() const { return picked_.size() >= budget_; }
  // Returns true if v was added.
  bool Add(uint32_t v) {
    if (full() || v == kNoParent || stored_[v] || is_output_[v]) return false;
    stored_[v] = 1;
    picked_.push_back(v);
    return true;
  }
  bool is_output(uint32_t v) const { return is_output_[v] != 0; }
  const std::vector<uint8_t>& stored() const { return stored_; }
  std::vector<uint32_t> Take() { return std::move(picked_); }

 private:
  std::vector<uint8_t> stored_;
  std::vector<uint8_t> is_output_;
  uint32_t budget_;
  std::vector<uint32_t> picked_;
};

std::vector<uint8_t> DroppedMask(const StrategyInput& in) {
  std::vector<uint8_t> mask(in.dag->node_count(), 0);
  for (uint32_t r : in.dropped) mask[in.dag->output_node[r]] = 1;
  return mask;
}

// Nodes from which some dropped output is reachable (through any nodes), outputs excluded.
std::vector<uint8_t> AncestorsOfDropped(const StrategyInput& in) {
  std::vector<uint8_t> anc = DroppedMask(in);
  const ChunkDag& dag = *in.dag;
  for (uint32_t v = dag.node_count(); v-- > 0;) {
    if (!anc[v]) continue;
    if (dag.parent0[v] != kNoParent) anc[dag.parent0[v]] = 1;
    if (dag.parent1[v] != kNoParent) anc[dag.parent1[v]] = 1;
  }
  return anc;
}

void PickRandom(const StrategyInput& in, Picker& pick) {
  std::mt19937_64 rng(in.seed);
  const uint32_t n = in.dag->node_count();
  uint64_t non_outputs = n - in.dag->m;
  uint64_t attempts = 0;
  while (!pick.full() && attempts < 64ull * (in.budget + 1) && attempts < 64ull * non_outputs) {
    ++attempts;
    pick.Add(static_cast<uint32_t>(rng() % n));
  }
}

void PickPredecessors(const StrategyInput& in, Picker& pick) {
  for (uint32_t r : in.dropped) {
    const uint32_t v = in.dag->output_node[r];
    pick.Add(in.dag->parent0[v]);
    pick.Add(in.dag->parent1[v]);
    if (pick.full()) return;
  }
}

// Walks the longest stored-free path back from v (depth_S decreases by one along it) and returns
// it from v downwards, at most max_nodes nodes: path[0] = v, path[i] has depth_S(v) - i.
std::vector<uint32_t> CriticalPath(const ChunkDag& dag, const std::vector<uint32_t>& depth, uint32_t v,
                                   uint32_t max_nodes) {
  std::vector<uint32_t> path;
  path.push_back(v);
  while (depth[v] > 1 && path.size() < max_nodes) {
    const uint32_t p0 = dag.parent0[v], p1 = dag.parent1[v];
    uint32_t next = p0;
    if (p1 != kNoParent && (p0 == kNoParent || depth[p1] > depth[p0])) next = p1;
    assert(next != kNoParent && depth[next] + 1 == depth[v]);
    v = next;
    path.push_back(v);
  }
  return path;
}

void PickCriticalPath(const StrategyInput& in, Picker& pick) {
  const ChunkDag& dag = *in.dag;
  const uint32_t t = in.threshold;
  for (int round = 0; round < in.max_rounds && !pick.full(); ++round) {
    std::vector<uint32_t> depth = *RecomputeDepths(dag, pick.stored());
    // Slow dropped outputs, nearest the threshold first: the cheapest to bring under it.
    std::vector<std::pair<uint32_t, uint32_t>> slow;
    for (uint32_t r : in.dropped) {
      const uint32_t v = dag.output_node[r];
      if (depth[v] >= t) slow.emplace_back(depth[v], v);
    }
    if (slow.empty()) return;
    std::sort(slow.begin(), slow.end());
    bool progress = false;
    for (const auto& [d, v] : slow) {
      if (pick.full()) break;
      // Only the first t nodes of the path matter: a stored node at index i <= t-1 leaves a tail
      // of i < t nodes above it. Stale depths after this round's cuts just make it a heuristic.
      std::vector<uint32_t> path = CriticalPath(dag, depth, v, t);
      bool cut = false;
      for (uint32_t u : path) cut = cut || pick.stored()[u];
      if (cut) continue;
      // Cut at path[t-1] (the lowest point that leaves a tail < t, so the cut is shared by as
      // many outputs as possible); picked ids must not be outputs: step further up past any.
      for (size_t j = path.size(); j-- > 0;) {
        if (!pick.is_output(path[j])) {
          if (pick.Add(path[j])) progress = true;
          break;
        }
      }
    }
    if (!progress) return;
  }
}

void PickMaxDescendants(const StrategyInput& in, Picker& pick) {
  const ChunkDag& dag = *in.dag;
  const uint32_t n = dag.node_count();
  std::vector<uint32_t> count(n, 0);
  std::vector<uint64_t> bits(n);
  // Exact reach counts, 64 dropped outputs per pass.
  for (size_t first = 0; first < in.dropped.size(); first += 64) {
    std::fill(bits.begin(), bits.end(), 0);
    const size_t last = std::min(in.dropped.size(), first + 64);
    for (size_t i = first; i < last; ++i) bits[dag.output_node[in.dropped[i]]] |= 1ull << (i - first);
    for (uint32_t v = n; v-- > 0;) {
      if (bits[v] == 0) continue;
      count[v] += static_cast<uint32_t>(__builtin_popcountll(bits[v]));
      if (dag.parent0[v] != kNoParent) bits[dag.parent0[v]] |= bits[v];
      if (dag.parent1[v] != kNoParent) bits[dag.parent1[v]] |= bits[v];
    }
  }
  std::vector<uint32_t> order;
  for (uint32_t v = 0; v < n; ++v) {
    if (count[v] > 0 && !pick.is_output(v)) order.push_back(v);
  }
  // Most descendants first; among equals the higher id (nearer the outputs).
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return count[a] != count[b] ? count[a] > count[b] : a > b; });
  for (uint32_t v : order) {
    if (pick.full()) return;
    pick.Add(v);
  }
}

void PickTopLayers(const StrategyInput& in, Picker& pick) {
  const ChunkDag& dag = *in.dag;
  std::vector<uint8_t> anc = AncestorsOfDropped(in);
  std::vector<uint32_t> order;
  for (uint32_t v = 0; v < dag.node_count(); ++v) {
    if (anc[v] && !pick.is_output(v)) order.push_back(v);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return dag.node_depth[a] != dag.node_depth[b] ? dag.node_depth[a] > dag.node_depth[b] : a > b;
  });
  for (uint32_t v : order) {
    if (pick.full()) return;
    pick.Add(v);
  }
}

void PickEveryJthLayer(const StrategyInput& in, Picker& pick) {
  const ChunkDag& dag = *in.dag;
  std::vector<uint8_t> anc = AncestorsOfDropped(in);
  uint32_t top = 0;
  for (uint32_t r : in.dropped) top = std::max(top, dag.node_depth[dag.output_node[r]]);
  const uint32_t stride = std::max<uint32_t>(1, in.threshold / 4);
  // Depth levels top-1, top-1-stride, ...: fill them nearest the outputs first.
  std::vector<std::vector<uint32_t>> by_level;
  for (uint32_t level = top > 1 ? top - 1 : 0; level >= 1; level = level > stride ? level - stride : 0) {
    by_level.emplace_back();
    for (uint32_t v = 0; v < dag.node_count(); ++v) {
      if (anc[v] && dag.node_depth[v] == level && !pick.is_output(v)) by_level.back().push_back(v);
    }
    if (level <= stride) break;
  }
  for (const auto& level_nodes : by_level) {
    for (uint32_t v : level_nodes) {
      if (pick.full()) return;
      pick.Add(v);
    }
  }
}

// The connector of standalone(d+1) starts with one kSingle op from its left half (the base of
// standalone(d)) into a disjoint slot range; each copy has one for every d = 0..n.
void PickStandaloneRightCut(const StrategyInput& in, int levels, Picker& pick) {
  const ChunkDag& dag = *in.dag;
  const GraphShape shape = ShapeForChunkLabels(dag.m);
  bool drops_in_copy[2] = {false, false};
  for (uint32_t r : in.dropped) drops_in_copy[r < shape.half ? 0 : 1] = true;
  int copy = -1;
  EmitGraphSchedule(dag.m, dag.m, [&](const GraphOp& op) {
    if (op.kind != GraphOpKind::kSingle || op.src == op.dst) return;
    if (op.log_width == 0 && op.src == 0) ++copy;  // standalone(1)'s connector: a copy begins
    const int d = op.log_width;
    if (copy < 0 || copy > 1 || !drops_in_copy[copy] || d > shape.n || d <= shape.n - levels) return;
    if (d == 0) return;  // no right half to cut
    const uint32_t w = op.width;
    for (uint32_t i = w / 2; i < w; ++i) pick.Add(dag.parent0[op.node_base + i]);
  });
}

}  // namespace

std::string ScaffoldStrategyName(ScaffoldStrategy s) {
  switch (s) {
    case ScaffoldStrategy::kNone:
      return "none";
    case ScaffoldStrategy::kRandom:
      return "random";
    case ScaffoldStrategy::kPredecessors:
      return "predecessors";
    case ScaffoldStrategy::kCriticalPath:
      return "critical_path";
    case ScaffoldStrategy::kMaxDescendants:
      return "max_descendants";
    case ScaffoldStrategy::kTopLayers:
      return "top_layers";
    case ScaffoldStrategy::kEveryJthLayer:
      return "every_jth_layer";
    case ScaffoldStrategy::kStandaloneRightCut:
      return "standalone_right_cut";
    case ScaffoldStrategy::kStandaloneRightCut2:
      return "standalone_right_cut2";
    case ScaffoldStrategy::kRightCutThenCriticalPath:
      return "right_cut_then_critical_path";
  }
  return "unknown";
}

std::vector<ScaffoldStrategy> AllScaffoldStrategies() {
  return {ScaffoldStrategy::kNone,
          ScaffoldStrategy::kRandom,
          ScaffoldStrategy::kPredecessors,
          ScaffoldStrategy::kCriticalPath,
          ScaffoldStrategy::kMaxDescendants,
          ScaffoldStrategy::kTopLayers,
          ScaffoldStrategy::kEveryJthLayer,
          ScaffoldStrategy::kStandaloneRightCut,
          ScaffoldStrategy::kStandaloneRightCut2,
          ScaffoldStrategy::kRightCutThenCriticalPath};
}

bool IsStructuralStrategy(ScaffoldStrategy s) {
  return s == ScaffoldStrategy::kStandaloneRightCut || s == ScaffoldStrategy::kStandaloneRightCut2 ||
         s == ScaffoldStrategy::kRightCutThenCriticalPath;
}

std::vector<uint32_t> ChooseScaffold(ScaffoldStrategy s, const StrategyInput& in) {
  assert(in.dag != nullptr && in.stored.size() == in.dag->node_count());
  Picker pick(in, IsStructuralStrategy(s) ? UINT32_MAX : in.budget);
  switch (s) {
    case ScaffoldStrategy::kNone:
      break;
    case ScaffoldStrategy::kRandom:
      PickRandom(in, pick);
      break;
    case ScaffoldStrategy::kPredecessors:
      PickPredecessors(in, pick);
      break;
    case ScaffoldStrategy::kCriticalPath:
      PickCriticalPath(in, pick);
      break;
    case ScaffoldStrategy::kMaxDescendants:
      PickMaxDescendants(in, pick);
      break;
    case ScaffoldStrategy::kTopLayers:
      PickTopLayers(in, pick);
      break;
    case ScaffoldStrategy::kEveryJthLayer:
      PickEveryJthLayer(in, pick);
      break;
    case ScaffoldStrategy::kStandaloneRightCut:
      PickStandaloneRightCut(in, 1, pick);
      break;
    case ScaffoldStrategy::kStandaloneRightCut2:
      PickStandaloneRightCut(in, 2, pick);
      break;
    case ScaffoldStrategy::kRightCutThenCriticalPath:
      PickStandaloneRightCut(in, 1, pick);
      PickCriticalPath(in, pick);
      break;
  }
  return pick.Take();
}

}  // namespace wipeproof

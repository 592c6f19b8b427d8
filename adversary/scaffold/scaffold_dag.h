// One chunk's graph (label-spec.md §3) as an explicit DAG: node ids, parents, and which node is
// output rank r. Built by replaying the layer schedule (graph_schedule.h) with a slot -> node id
// table, exactly as the labeler replays it with labels, so the edges are the ones the labels use.
//
// It exists for the scaffold-storage analysis (scaffold_depth.h, docs/scaffold-depth.md): an
// adversary that keeps internal nodes instead of outputs needs the graph's edges, which the
// labelers never materialise.
//
// Node ids are the spec's node numbers (emission order), so every parent id is smaller than its
// child's id: ascending id order is a topological order. A node has 0, 1 or 2 parents, parent0 <
// parent1 when it has two (spec §3).
//
// Size: 12 bytes per node (two uint32 parents and the depth) plus 4 bytes per output: 35 MiB at
// m = 2^14 (3,047,422 nodes), 183 MiB at m = 2^16 (15,990,782 nodes).
// Thread-safety: an immutable value once built.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace wipeproof {

// Largest m BuildChunkDag accepts: 2^17 is 36 M nodes (414 MiB); larger graphs are refused.
constexpr uint32_t kMaxScaffoldDagLabels = 1u << 17;
constexpr uint32_t kNoParent = UINT32_MAX;

struct ChunkDag {
  uint32_t m = 0;                     // outputs
  std::vector<uint32_t> parent0;      // per node id; kNoParent for a source
  std::vector<uint32_t> parent1;      // per node id; kNoParent unless the node has two parents
  std::vector<uint32_t> output_node;  // output rank r -> node id (size m)
  std::vector<uint32_t> node_depth;   // longest parent path ending at the node, in nodes (source: 1)

  uint32_t node_count() const { return static_cast<uint32_t>(parent0.size()); }
  uint64_t edge_count() const;
};

// Builds the graph for m outputs as the labeler emits it: for a power of two all 2*S(level) nodes
// of the spec; otherwise copy B stops after output rank m-1 (the nodes the spec emits after it are
// no output's ancestors, so no recompute depth changes).
// Errors: InvalidArgument unless 1 <= m <= kMaxScaffoldDagLabels.
StatusOr<ChunkDag> BuildChunkDag(uint32_t m);

}  // namespace wipeproof

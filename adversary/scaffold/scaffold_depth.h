// Recompute depth under a stored set: the checker of the scaffold-storage argument
// (docs/scaffold-depth.md, issue #6 adversary 8).
//
// An adversary keeps a set S of nodes of one chunk's graph (output labels and/or internal
// "scaffold" labels; every label is 32 bytes, so every node of S costs the same). To answer a
// challenge for an output it did not keep it must recompute it. With unbounded parallelism the
// time that takes is the longest chain of nodes it has to hash one after the other:
//
//   depth_S(v) = 0                                         if v in S
//              = 1 + max(depth_S(parent) over parents)     otherwise (a source: 1)
//
// i.e. the number of nodes on the longest parent path ending at v that avoids S (stored nodes cut
// every path through them). depth_{} is the graph depth of kernels/graph_metrics.h. Units: nodes =
// sequential compressions for posedb-blake3-c1 (x2 for posedb-blake3-192, spec §5).
//
// Charge. Outputs in S are "kept"; the others are "dropped". Nodes of S that are not outputs are
// "scaffold". A dropped output is "fast" when depth_S < threshold (the deadline rule's 1.5*m). The
// security argument needs fast_dropped <= scaffold: every output answered inside the deadline was
// paid for with one stored label, whether the label is the output or scaffold. gain =
// fast_dropped - scaffold > 0 would be a stored set that beats honest storage.
//
// Cost: one pass over the nodes in id order (ids are topological, scaffold_dag.h): O(nodes).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "adversary/scaffold/scaffold_dag.h"
#include "common/status.h"

namespace wipeproof {

// depth_S for every node. `stored` has one byte per node id (non-zero = in S).
// Errors: InvalidArgument if stored.size() != dag.node_count().
StatusOr<std::vector<uint32_t>> RecomputeDepths(const ChunkDag& dag, const std::vector<uint8_t>& stored);

// The threshold of the security argument: ceil(1.5 * m) nodes.
uint32_t DeadlineDepth(uint32_t m);

struct StoredSetEvaluation {
  uint32_t threshold = 0;          // nodes; a dropped output is fast when its depth_S < threshold
  uint32_t kept_outputs = 0;       // outputs in S
  uint32_t dropped_outputs = 0;    // outputs not in S (k)
  uint32_t scaffold_nodes = 0;     // non-output nodes in S (k'), each charged one label
  uint32_t fast_dropped = 0;       // dropped outputs with depth_S < threshold
  int64_t gain = 0;                // fast_dropped - scaffold_nodes; the argument needs <= 0
  uint32_t min_dropped_depth = 0;  // min depth_S over dropped outputs (0 if none dropped)
  uint32_t max_dropped_depth = 0;  // max depth_S over dropped outputs
  double mean_dropped_depth = 0;
  std::vector<uint32_t> output_depth;  // depth_S per output rank (0 for kept outputs)
};

// Evaluates S against `threshold` (pass DeadlineDepth(dag.m) for the design brief's claim).
// Errors: InvalidArgument if stored.size() != dag.node_count().
StatusOr<StoredSetEvaluation> EvaluateStoredSet(const ChunkDag& dag, const std::vector<uint8_t>& stored,
                                                uint32_t threshold);

// Longest path, in nodes, from each node to any node with target[v] != 0, through nodes not in S
// (a stored node neither starts nor continues a path: 0); 0 where no target is reachable. The
// reverse of RecomputeDepths: depth_S(v) + height(v) - 1 is the longest stored-free path through v
// into a target, which tells which nodes lie on the paths a cut must hit. O(nodes).
// Errors: InvalidArgument if a mask's size is not dag.node_count().
StatusOr<std::vector<uint32_t>> HeightsToTargets(const ChunkDag& dag, const std::vector<uint8_t>& stored,
                                                 const std::vector<uint8_t>& target);

}  // namespace wipeproof

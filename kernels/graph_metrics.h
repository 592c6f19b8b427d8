// Metrics of the graph for m outputs (label-spec.md §3 table), computed by replaying the schedule:
// `wipeproof-prover graph-info` prints them.
// Thread-safety: pure function.
#pragma once

#include <cstdint>

namespace wipeproof {

struct GraphMetrics {
  uint32_t m = 0;
  uint64_t nodes = 0;             // nodes of the spec's graph, 2*S(level)
  double nodes_per_output = 0;    // nodes / m
  uint64_t nodes_hashed = 0;      // nodes the labeler evaluates (copy B's unneeded tail skipped)
  uint64_t min_output_depth = 0;  // longest predecessor path ending at an output, minimised over outputs
  uint64_t max_output_depth = 0;  // ... maximised over outputs (a source has depth 1)
  uint64_t peak_live_labels = 0;  // labels the labeler holds at once (its scratch, 2*half)
  uint64_t schedule_ops = 0;      // layer operations in the schedule
};

// REQUIRES: 1 <= m <= 2^20. Cost: one pass over the schedule, ~nodes simple steps (2^20: ~1 s).
GraphMetrics ComputeGraphMetrics(uint32_t m);

}  // namespace wipeproof

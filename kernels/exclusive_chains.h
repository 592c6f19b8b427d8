// The least work that yields a given number of a chunk graph's output labels (label-spec.md §3):
// each output's *exclusive chain*, a path of the graph ending at that output that shares no node
// with any other output's chain. Computing an output label means evaluating every node on some
// path to it from a source (a node's label is a hash of its predecessors' labels: without them it
// can only be guessed, as in the random-oracle argument of PoSE-DB), in particular every node of
// its exclusive chain, and no node is on two chains. So any computation that yields a set S of
// outputs of one chunk graph evaluated at least sum over S of len(chain) distinct nodes, however
// it schedules, shares or caches them; and for k outputs at least the sum of the k shortest
// chains. Each chunk (and each session seed) is its own graph, so chunks add up.
//
// The chains: one pass over the schedule (graph_schedule.h), forward and greedy. Every new node
// extends the chain that ends at one of its predecessors, if such a chain is still open (no other
// node extended it) and that predecessor is not an output (an output must end its own chain); it
// takes the longer of two; otherwise it starts a chain of its own. Every node is on exactly one
// chain and every chain is a path, so the chains are vertex-disjoint by construction; greedy only
// decides how long they are (a lower bound either way: any disjoint family proves it).
//
// Shapes: lengths in nodes; a node costs the format's compressions per node (label_spec.h).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

namespace wipeproof {

struct ExclusiveChains {
  uint32_t m = 0;
  std::vector<uint32_t> lengths;  // [output rank]: nodes on that output's chain
  std::vector<uint64_t> prefix;   // [k]: sum of the k shortest lengths; m + 1 entries
};

inline constexpr uint64_t kChainStart = UINT64_MAX;

// REQUIRES: 1 <= m <= kMaxChunkLabels. Cost: two schedule replays, ~nodes steps and nodes/8 bytes
// (2^17: 36 M nodes, ~0.1 s). `chain_parent` (tests; may be null): per node number emitted, the node
// whose chain it extended, or kChainStart.
ExclusiveChains ComputeExclusiveChains(uint32_t m, std::vector<uint64_t>* chain_parent = nullptr);

// The least number of graph nodes any computation evaluated that yields `held` distinct output
// labels of `chunks` chunk graphs of these chains (held <= chunks * m): the `held` shortest chains
// over all chunks, i.e. each chunk's k shortest and r chunks' (k+1)-th, for held = chunks*k + r.
// Saturates at UINT64_MAX.
uint64_t LeastNodesForOutputs(const ExclusiveChains& chains, uint64_t chunks, uint64_t held);

}  // namespace wipeproof

// Exclusive chains (kernels/exclusive_chains.h), checked on the explicit DAG (adversary/scaffold/
// scaffold_dag.h, itself checked node for node against a transcription of label-spec.md §3): every
// chain step is an edge of the graph, no node is extended twice and no output is extended, so the
// chains are vertex-disjoint paths ending at the outputs; their lengths are what the function
// reports; and LeastNodesForOutputs is the least sum over every way to spread held outputs over
// chunks.
#include "kernels/exclusive_chains.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "adversary/scaffold/scaffold_dag.h"
#include "kernels/graph_metrics.h"

namespace wipeproof {
namespace {

TEST(ExclusiveChains, AreDisjointPathsOfTheGraphEndingAtTheOutputs) {
  for (uint32_t m : {1u, 2u, 3u, 5u, 16u, 17u, 64u, 100u, 256u, 1000u, 4096u}) {
    SCOPED_TRACE(m);
    std::vector<uint64_t> parent;
    const ExclusiveChains chains = ComputeExclusiveChains(m, &parent);
    auto dag = BuildChunkDag(m);
    ASSERT_TRUE(dag.ok()) << dag.status().ToString();
    const uint32_t nodes = dag->node_count();
    ASSERT_GE(parent.size(), nodes);
    for (size_t v = nodes; v < parent.size(); ++v) ASSERT_EQ(parent[v], kChainStart) << v;  // never emitted
    std::vector<bool> is_output(nodes, false), extended(nodes, false);
    for (uint32_t r = 0; r < m; ++r) is_output[dag->output_node[r]] = true;
    for (uint32_t v = 0; v < nodes; ++v) {
      if (parent[v] == kChainStart) continue;
      const uint64_t p = parent[v];
      ASSERT_TRUE(p == dag->parent0[v] || p == dag->parent1[v]) << "node " << v << " extends " << p << ", no parent";
      ASSERT_FALSE(extended[p]) << "node " << p << " extended twice";
      ASSERT_FALSE(is_output[p]) << "output node " << p << " extended";
      extended[p] = true;
    }
    ASSERT_EQ(chains.lengths.size(), m);
    uint64_t covered = 0;
    for (uint32_t r = 0; r < m; ++r) {
      uint32_t length = 1;
      for (uint64_t v = dag->output_node[r]; parent[v] != kChainStart; v = parent[v]) ++length;
      EXPECT_EQ(chains.lengths[r], length) << "rank " << r;
      covered += length;
    }
    EXPECT_LE(covered, nodes);
    std::vector<uint32_t> sorted = chains.lengths;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(chains.prefix.size(), size_t{m} + 1);
    for (uint32_t k = 0; k < m; ++k) EXPECT_EQ(chains.prefix[k + 1] - chains.prefix[k], sorted[k]);
    EXPECT_EQ(chains.prefix[m], covered);
  }
}

// Greedy decides only how strong the bound is; this keeps it from silently getting weak: at 2^12 the
// chains cover at least 85% of the nodes the labeler evaluates (88% when written).
TEST(ExclusiveChains, CoverMostOfTheGraph) {
  const ExclusiveChains chains = ComputeExclusiveChains(4096);
  EXPECT_GE(static_cast<double>(chains.prefix[4096]), 0.85 * static_cast<double>(ComputeGraphMetrics(4096).nodes_hashed));
}

// Brute force: the least total over every split of `held` outputs into per-chunk counts, each chunk
// paying its shortest chains.
uint64_t LeastByBruteForce(const ExclusiveChains& c, uint64_t chunks, uint64_t held) {
  if (chunks == 0) return held == 0 ? 0 : UINT64_MAX;
  uint64_t best = UINT64_MAX;
  for (uint64_t here = 0; here <= std::min<uint64_t>(held, c.m); ++here) {
    const uint64_t rest = LeastByBruteForce(c, chunks - 1, held - here);
    if (rest != UINT64_MAX) best = std::min(best, c.prefix[here] + rest);
  }
  return best;
}

TEST(ExclusiveChains, LeastNodesForOutputsIsTheLeastSplit) {
  for (uint32_t m : {1u, 3u, 16u, 17u}) {
    const ExclusiveChains chains = ComputeExclusiveChains(m);
    for (uint64_t chunks = 1; chunks <= 3; ++chunks) {
      for (uint64_t held = 0; held <= chunks * m; ++held) {
        EXPECT_EQ(LeastNodesForOutputs(chains, chunks, held), LeastByBruteForce(chains, chunks, held))
            << "m " << m << " chunks " << chunks << " held " << held;
      }
    }
  }
  // Every output of every chunk: the whole chains; none: nothing; saturating at 2^64 - 1.
  const ExclusiveChains c = ComputeExclusiveChains(64);
  EXPECT_EQ(LeastNodesForOutputs(c, 1000, 64000), 1000 * c.prefix[64]);
  EXPECT_EQ(LeastNodesForOutputs(c, 1000, 0), 0u);
  EXPECT_EQ(LeastNodesForOutputs(c, UINT64_MAX / 2, UINT64_MAX / 2 * 64), UINT64_MAX);
}

}  // namespace
}  // namespace wipeproof

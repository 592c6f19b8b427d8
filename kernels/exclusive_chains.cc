#include "kernels/exclusive_chains.h"

#include <algorithm>

#include "kernels/graph_schedule.h"

namespace wipeproof {

ExclusiveChains ComputeExclusiveChains(uint32_t m, std::vector<uint64_t>* chain_parent) {
  const GraphShape shape = ShapeForChunkLabels(m);
  // Pass 1: which node numbers are outputs.
  std::vector<uint64_t> node(shape.scratch_labels, 0);
  std::vector<bool> is_output(shape.total_nodes, false);
  EmitGraphSchedule(m, m, [&](const GraphOp& op) {
    if (op.kind == GraphOpKind::kOutput) {
      for (uint32_t i = 0; i < op.width; ++i) is_output[node[op.src + i]] = true;
      return;
    }
    for (uint32_t i = 0; i < op.width; ++i) node[op.dst + i] = op.node_base + i;
  });
  // Pass 2: the chains. Per slot: the node in it, its chain's length, and whether a later node
  // extended it (its chain is no longer open).
  std::vector<uint32_t> len(shape.scratch_labels, 0);
  std::vector<uint8_t> open(shape.scratch_labels, 0);
  std::fill(node.begin(), node.end(), 0);
  ExclusiveChains out;
  out.m = m;
  out.lengths.assign(m, 0);
  auto extendable = [&](uint32_t slot) { return open[slot] && !is_output[node[slot]]; };
  if (chain_parent != nullptr) chain_parent->assign(shape.total_nodes, kChainStart);
  // Records that node number `v` extended the chain of the node in `slot` (tests only).
  auto note = [&](uint64_t v, uint32_t slot) {
    if (chain_parent != nullptr) (*chain_parent)[v] = node[slot];
  };
  EmitGraphSchedule(m, m, [&](const GraphOp& op) {
    const uint32_t w = op.width;
    switch (op.kind) {
      case GraphOpKind::kSource:
        len[op.dst] = 1;
        break;
      case GraphOpKind::kSingle:
        for (uint32_t i = 0; i < w; ++i) {
          const uint32_t s = op.src + i;
          uint32_t l = 1;
          if (extendable(s)) {
            open[s] = 0;
            l = len[s] + 1;
            note(op.node_base + i, s);
          }
          len[op.dst + i] = l;
        }
        break;
      case GraphOpKind::kMerge:
        for (uint32_t i = 0; i < w; ++i) {
          const uint32_t s = op.src + i, d = op.dst + i;
          const bool from_s = extendable(s), from_d = extendable(d);
          uint32_t l = 1;
          if (from_s && (!from_d || len[s] > len[d])) {
            open[s] = 0;
            l = len[s] + 1;
            note(op.node_base + i, s);
          } else if (from_d) {
            l = len[d] + 1;  // the old node in d is replaced: nothing else can extend it
            note(op.node_base + i, d);
          }
          len[d] = l;
        }
        break;
      case GraphOpKind::kButterfly: {
        // Nodes at a and b both read the old a and b; each extends a different one.
        const uint32_t bit = 1u << op.log_bit;
        for (uint32_t i = 0; i < w; ++i) {
          if (i & bit) continue;
          const uint32_t a = op.dst + i, b = a + bit;
          const bool ea = extendable(a), eb = extendable(b);
          const uint32_t la = len[a], lb = len[b];
          const uint64_t va = op.node_base + i, vb = va + bit;
          if (ea && eb) {
            note(va, a);
            note(vb, b);
            len[a] = la + 1;
            len[b] = lb + 1;
          } else if (ea || eb) {  // one open chain: the node that keeps it, the other starts anew
            note(ea ? va : vb, ea ? a : b);
            const uint32_t l = (ea ? la : lb) + 1;
            len[a] = ea ? l : 1;
            len[b] = ea ? 1 : l;
          } else {
            len[a] = len[b] = 1;
          }
        }
        break;
      }
      case GraphOpKind::kOutput:
        for (uint32_t i = 0; i < w; ++i) out.lengths[op.node_base + i] = len[op.src + i];
        return;
    }
    for (uint32_t i = 0; i < w; ++i) {
      node[op.dst + i] = op.node_base + i;
      open[op.dst + i] = 1;
    }
  });
  std::vector<uint32_t> sorted = out.lengths;
  std::sort(sorted.begin(), sorted.end());
  out.prefix.assign(size_t{m} + 1, 0);
  for (uint32_t k = 0; k < m; ++k) out.prefix[k + 1] = out.prefix[k] + sorted[k];
  return out;
}

uint64_t LeastNodesForOutputs(const ExclusiveChains& chains, uint64_t chunks, uint64_t held) {
  if (chains.m == 0 || chunks == 0 || held == 0) return 0;
  const uint64_t k = std::min<uint64_t>(held / chunks, chains.m);
  const uint64_t r = k == chains.m ? 0 : held - k * chunks;
  const unsigned __int128 total = static_cast<unsigned __int128>(chunks) * chains.prefix[k] +
                                  static_cast<unsigned __int128>(r) * (chains.prefix[k + (r > 0)] - chains.prefix[k]);
  return total > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(total);
}

}  // namespace wipeproof

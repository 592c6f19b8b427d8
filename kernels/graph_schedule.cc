#include "kernels/graph_schedule.h"

#include <cassert>

namespace wipeproof {

GraphShape ShapeForChunkLabels(uint32_t m) {
  assert(m >= 1 && m <= kMaxChunkLabels);
  GraphShape s;
  s.m = m;
  if (m > 1) {
    int bit_length = 0;
    for (uint32_t v = m - 1; v != 0; v >>= 1) ++bit_length;
    s.n = bit_length - 1;
  }
  s.level = s.n + 1;
  s.half = 1u << s.n;
  s.scratch_labels = 1u << s.level;
  s.total_nodes = 2 * StandaloneNodeCount(s.level);
  return s;
}

uint64_t StandaloneNodeCount(int level) {
  uint64_t c = 1, st = 1;  // C(0), S(0)
  for (int k = 1; k <= level; ++k) {
    uint64_t b = static_cast<uint64_t>(k) << (k - 1);  // B(k-1) = k * 2^(k-1)
    st = st + b + c;                                   // S(k) = S(k-1) + B(k-1) + C(k-1)
    c = 2 * c + 2 * b;                                 // C(k) = 2C(k-1) + 2B(k-1)
  }
  return st;
}

std::vector<GraphOp> BuildGraphProgram(uint32_t m, uint32_t ranks_needed) {
  std::vector<GraphOp> ops;
  EmitGraphSchedule(m, ranks_needed, [&ops](const GraphOp& op) { ops.push_back(op); });
  return ops;
}

}  // namespace wipeproof

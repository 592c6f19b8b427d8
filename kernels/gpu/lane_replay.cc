#include "kernels/gpu/lane_replay.h"

#include <algorithm>
#include <vector>

namespace wipeproof {
namespace gpu {
namespace {

// Compressions of one item of `op`: the most any of its items needs, and the mean.
struct ItemCost {
  double max = 0, mean = 0;
};

ItemCost CostOf(const DeviceOp& op, const ReplayCost& cost) {
  if (op.kind == kOpOutput) return {};
  const double hashes = op.kind == kOpButterfly ? 2 : 1;
  if (cost.format == 0) return {hashes, hashes};
  // 192: 2 compressions per hash with a cached block 0, 3 without.
  const uint64_t lo = op.node_base, hi = lo + op.width;
  const uint64_t cached = hi <= cost.cv0_nodes ? op.width : lo >= cost.cv0_nodes ? 0 : cost.cv0_nodes - lo;
  const double per_hash_mean = 3.0 - static_cast<double>(cached) / op.width;
  return {hashes * (cached == op.width ? 2 : 3), hashes * per_hash_mean};
}

}  // namespace

ReplayResult ReplayTeam(const DeviceProgram& p, const ReplayShape& shape, const ReplayCost& cost) {
  ReplayResult r;
  const uint32_t G = shape.team_threads, W = shape.warp_width, C = shape.chunks;
  r.lane_width = W;
  r.warps = (G + W - 1) / W;
  r.steps = p.steps;
  std::vector<DeviceOp> ops;
  std::vector<double> warp_step(r.warps), warp_step_instructions(r.warps);
  const double per_c = cost.instructions_per_compression, per_item = cost.instructions_per_item;
  for (uint32_t s = 0; s < p.steps; ++s) {
    ops.clear();
    for (uint32_t o = p.step_begin[s]; o < p.step_begin[s + 1]; ++o) ops.push_back(DecodeOp(p.words.data(), o));
    std::fill(warp_step.begin(), warp_step.end(), 0.0);
    std::fill(warp_step_instructions.begin(), warp_step_instructions.end(), 0.0);
    if (shape.pooled) {
      const uint64_t items = static_cast<uint64_t>(ops.back().unit_end) * C;
      r.items += items;
      size_t cursor = 0;
      // Loop iteration j, warp w: items [j*G + w*W, j*G + min(G, (w+1)*W)), in increasing order.
      for (uint64_t base = 0; base < items; base += G) {
        for (uint32_t w = 0; w < r.warps; ++w) {
          const uint64_t x = base + static_cast<uint64_t>(w) * W;
          const uint64_t y = std::min<uint64_t>(base + std::min<uint64_t>(G, static_cast<uint64_t>(w + 1) * W), items);
          if (x >= y) break;
          while (static_cast<uint64_t>(ops[cursor].unit_end) * C <= x) ++cursor;
          double issue = 0;
          for (size_t o = cursor; o < ops.size(); ++o) {
            const uint64_t lo = static_cast<uint64_t>(ops[o].unit_end - OpUnits(ops[o])) * C;
            const uint64_t hi = static_cast<uint64_t>(ops[o].unit_end) * C;
            if (lo >= y) break;
            const uint64_t n = std::min(hi, y) - std::max(lo, x);
            const ItemCost c = CostOf(ops[o], cost);
            issue = std::max(issue, c.max);
            r.useful_compressions += n * c.mean;
          }
          r.warp_compressions += issue;
          warp_step[w] += issue;
          ++r.warp_iterations;
          warp_step_instructions[w] += issue * per_c + per_item;
        }
      }
    } else {
      // One loop per op; op items k (chunk k % C, unit k / C) on thread (k + rotation) % G.
      uint64_t rotation = 0;
      for (const DeviceOp& op : ops) {
        const uint64_t items = static_cast<uint64_t>(OpUnits(op)) * C;
        r.items += items;
        const ItemCost c = CostOf(op, cost);
        r.useful_compressions += items * c.mean;
        for (uint32_t w = 0; w < r.warps; ++w) {
          // The warp's threads [w*W, min(G, (w+1)*W)) take first items k0 = (t - rotation) mod G;
          // the one with the smallest k0 runs the most iterations.
          const uint64_t t0 = static_cast<uint64_t>(w) * W, t1 = std::min<uint64_t>(G, t0 + W);
          const uint64_t start = (t0 + G - rotation % G) % G;  // k0 of thread t0
          const uint64_t k0 = start + (t1 - t0) > G ? 0 : start;
          const uint64_t iterations = k0 < items ? (items - 1 - k0) / G + 1 : 0;
          r.warp_compressions += iterations * c.max;
          warp_step[w] += iterations * c.max;
          r.warp_iterations += iterations;
          warp_step_instructions[w] += iterations * (c.max * per_c + per_item);
        }
        rotation += items;
      }
    }
    r.critical_path_compressions += *std::max_element(warp_step.begin(), warp_step.end());
    r.critical_path_instructions += *std::max_element(warp_step_instructions.begin(), warp_step_instructions.end());
    for (double v : warp_step_instructions) r.warp_instructions += v;
  }
  return r;
}

}  // namespace gpu
}  // namespace wipeproof

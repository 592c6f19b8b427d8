// An exact replay of the fill kernel's item-to-thread mapping (team_executor.h TeamRunStep) for
// one team over a program, without hashing: which lanes of which warp issue how many
// compressions in each loop iteration of each super-step. From it follow the lane use (the
// fraction of SIMT lane-slots that do useful compressions), the team's critical path (per step,
// the busiest warp's compressions), the barrier count and the items. The fill model
// (prover/backends/gpu/fill_model.h) turns these into seconds for a named GPU shape.
//
// A warp running a loop iteration in which its lanes' items need different numbers of
// compressions (a butterfly pair hashes twice, a 192 node without a cached block 0 needs 3
// compressions instead of 2) issues the largest; lanes without an item (the loop's last
// iteration, lanes past G) idle.
//
// `pooled = false` replays the kernel before v2 (one loop per op, items continuing the thread
// rotation across a step's ops), for comparisons.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "kernels/gpu/device_program.h"

namespace wipeproof {
namespace gpu {

struct ReplayShape {
  uint32_t team_threads = 64;  // G
  uint32_t chunks = 1;         // C
  uint32_t warp_width = 32;    // 32 (NVIDIA), 64 (AMD wavefront)
  bool pooled = true;
};

struct ReplayCost {
  int format = 0;          // 0 c1 (1 compression per node hash), 1 192 (2, or 3 without block 0)
  uint64_t cv0_nodes = 0;  // 192: node numbers below this have a cached block 0
  // Weights of the instruction counts below: a warp's loop iteration issues the compressions of its
  // busiest lane times instructions_per_compression, plus instructions_per_item.
  double instructions_per_compression = 1;
  double instructions_per_item = 0;
};

struct ReplayResult {
  uint64_t steps = 0;                     // barriers (super-steps) per team
  uint64_t items = 0;                     // item executions per team (all chunks)
  double useful_compressions = 0;         // per team
  double warp_compressions = 0;           // per team: SIMT issue, compressions x warps
  double critical_path_compressions = 0;  // per team: sum over steps of the busiest warp's
  uint64_t warp_iterations = 0;           // per team: loop iterations of all warps with an item
  double warp_instructions = 0;           // per team: ReplayCost-weighted issue of all warps
  double critical_path_instructions = 0;  // per team: sum over steps of the busiest warp's
  uint32_t warps = 0;                     // per team: ceil(G / warp width)
  double lane_use() const { return warp_compressions > 0 ? useful_compressions / (warp_compressions * lane_width) : 0; }
  uint32_t lane_width = 32;
};

// Replays one team of `shape` over program `p`. REQUIRES: shape.team_threads, chunks >= 1.
ReplayResult ReplayTeam(const DeviceProgram& p, const ReplayShape& shape, const ReplayCost& cost);

}  // namespace gpu
}  // namespace wipeproof

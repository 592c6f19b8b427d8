// The graph schedule (kernels/graph_schedule.h) packed for devices, and regrouped into
// *super-steps*: maximal sets of ops that may run at the same time.
//
// Why super-steps. The schedule is a chain of 1.3 M layer ops at m = 2^17 (163 k at 2^14), 40% of
// them of width 1, and a team barrier after every op makes that chain the latency of a chunk. But
// many consecutive ops are independent (the ingress half of a merged connector does not read the
// left recursion it runs beside, and the recursion's leaves touch disjoint slots). Levelling the
// ops by their slot dependencies (read-after-write, write-after-read and write-after-write, per
// scratch slot) and barriering only between levels leaves 590 k super-steps at 2^17 (74 k at 2^14),
// 2.2x fewer, each with more items, so lanes idle less: at 2^17 with 32 threads per chunk, 72% of
// lane slots do useful work instead of 43% (docs/kernels.md has the table).
//
// Within a super-step no two ops touch the same slot unless both only read it, so their items
// may run in any order and on any thread (tests/kernels/gpu_kernel_logic_test.cc checks this with an
// access observer and by running steps in reverse order).
//
// Packed op: three 32-bit words (12 bytes: 15.7 MB at m = 2^17, 126 MB at 2^20).
//   a: [0, 21) src slot | [21, 24) kind | [24, 29) log_width | bit 29: last op of its super-step
//   b: [0, 21) dst slot (kOutput: the number of ranks) | [21, 26) log_bit | bit 26: kOutput of copy B
//   c: node number of the op's element 0 (kOutput: unused)
// Scratch slots are < 2^20 and node numbers < 2^29 for every m <= 2^20.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/graph_schedule.h"
#include "kernels/host_device.h"

namespace wipeproof {
namespace gpu {

constexpr uint32_t kOpWords = 3;
constexpr uint32_t kOpSlotMask = (1u << 21) - 1;
constexpr uint32_t kOpStepEnd = 1u << 29;

struct DeviceOp {
  uint32_t kind;  // GraphOpKind as an integer
  uint32_t log_width;
  uint32_t log_bit;
  uint32_t src;
  uint32_t dst;         // kOutput: == src
  uint32_t width;       // nodes of the layer, or output ranks
  uint32_t first_rank;  // kOutput only
  uint32_t node_base;   // node number of element 0
  bool step_end;        // a barrier follows this op
};

constexpr uint32_t kOpSource = static_cast<uint32_t>(GraphOpKind::kSource);
constexpr uint32_t kOpSingle = static_cast<uint32_t>(GraphOpKind::kSingle);
constexpr uint32_t kOpButterfly = static_cast<uint32_t>(GraphOpKind::kButterfly);
constexpr uint32_t kOpMerge = static_cast<uint32_t>(GraphOpKind::kMerge);
constexpr uint32_t kOpOutput = static_cast<uint32_t>(GraphOpKind::kOutput);

// Decodes op `index` of a packed program.
WP_HOST_DEVICE DeviceOp DecodeOp(const uint32_t* program, uint32_t index) {
  const uint32_t a = program[index * kOpWords], b = program[index * kOpWords + 1];
  DeviceOp op;
  op.src = a & kOpSlotMask;
  op.kind = (a >> 21) & 7u;
  op.log_width = (a >> 24) & 31u;
  op.step_end = (a & kOpStepEnd) != 0;
  op.log_bit = (b >> 21) & 31u;
  op.node_base = program[index * kOpWords + 2];
  if (op.kind == kOpOutput) {
    op.dst = op.src;
    op.width = b & kOpSlotMask;
    op.first_rank = ((b >> 26) & 1u) ? op.src : 0u;  // copy B's outputs start at rank half = src
  } else {
    op.dst = b & kOpSlotMask;
    op.width = 1u << op.log_width;
    op.first_rank = 0;
  }
  return op;
}

// Nodes an op emits (0 for kOutput).
WP_HOST_DEVICE uint32_t OpNodes(const DeviceOp& op) { return op.kind == kOpOutput ? 0u : op.width; }

// Items the team splits among its threads: one per node (a butterfly pair counts once), per
// output label, for each of `chunks` chunks.
WP_HOST_DEVICE uint32_t OpItems(const DeviceOp& op, uint32_t chunks) {
  return chunks * (op.kind == kOpButterfly ? op.width >> 1 : op.width);
}

struct DeviceProgram {
  std::vector<uint32_t> words;  // kOpWords per op
  uint32_t ops = 0;
  uint32_t steps = 0;                         // super-steps (barriers)
  uint64_t nodes = 0;                         // node numbers used: [0, nodes)
  uint64_t source_nodes[2] = {~0ull, ~0ull};  // kSource node numbers (one per standalone copy)
};

// The schedule of the graph for `graph_labels` outputs with ranks [0, ranks_needed) emitted,
// levelled into super-steps. With `levelled` false every op is its own step (the plain chain, for
// comparisons). REQUIRES: 1 <= ranks_needed <= graph_labels <= kMaxChunkLabels.
DeviceProgram BuildDeviceProgram(uint32_t graph_labels, uint32_t ranks_needed, bool levelled = true);

}  // namespace gpu
}  // namespace wipeproof

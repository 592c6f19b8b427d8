// The graph schedule (kernels/graph_schedule.h) packed for devices: relocated so a chunk is
// labelled in its own m slots, and regrouped into *super-steps* whose items a team pools.
//
// Work layout ("in place"). graph_schedule.h runs both standalone copies of a chunk on one
// scratch array of 2^level slots, so copy A's outputs must leave before copy B starts and the
// live set plus the outputs kept is 1.5 * 2^level. Here the top-level connector's first layer
// (right[i] = node(left[i]), one predecessor) is computed in place over the left half, and the
// rest of that copy follows it there, so each copy needs only half = 2^(level-1) slots: copy A
// works in slots [0, half) and ends with output ranks 0..half-1 there, copy B works in
// [half, 2*half) and ends with ranks half..m-1 there. Output rank r sits in work slot r, and the
// chunk's whole footprint is WorkLabels(m) = 2*half slots: exactly m for powers of two (the
// chunk's own label slots, nothing else), m + (2*half - m) otherwise. The two copies share no
// slot, so the levelling below runs them side by side.
//
// Super-steps. Levelling the ops by their slot dependencies (read-after-write, write-after-read,
// write-after-write, per work slot) and barriering only between levels. With the copies side by
// side that leaves 49,137 steps at m = 2^14 (163 k ops; 73,713 with the copies one after the
// other) and 393,198 at 2^17 (1.31 M ops).
// Within a super-step no two ops touch the same slot unless both only read it, so their items may
// run in any order and on any thread (tests/kernels/gpu_kernel_logic_test.cc checks this with an
// access observer and by running steps in reverse order).
//
// Units. An op has `units`: one per node (a butterfly pair counts once) or per output rank.
// A team pools a step's units across its C chunks into one item loop (team_executor.h); each op
// stores the step's running unit count up to and including itself, which is how an item finds its op.
//
// Packed op: four 32-bit words (16 bytes: 21 MB at m = 2^17).
//   a: [0, 21) src slot | [21, 24) kind | [24, 29) log_width
//   b: [0, 21) dst slot (kOutput: the number of ranks) | [21, 26) log_bit | bit 26: kOutput of copy B
//   c: node number of the op's element 0 (kOutput: unused)
//   d: units of the op's step up to and including this op
// Scratch slots are < 2^20 and node numbers < 2^29 for every m <= 2^20.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "kernels/graph_schedule.h"
#include "kernels/host_device.h"

namespace wipeproof {
namespace gpu {

constexpr uint32_t kOpWords = 4;
constexpr uint32_t kOpSlotMask = (1u << 21) - 1;

struct DeviceOp {
  uint32_t kind;  // GraphOpKind as an integer
  uint32_t log_width;
  uint32_t log_bit;
  uint32_t src;
  uint32_t dst;         // kOutput: == src
  uint32_t width;       // nodes of the layer, or output ranks
  uint32_t first_rank;  // kOutput only
  uint32_t node_base;   // node number of element 0
  uint32_t unit_end;    // the step's units up to and including this op
};

constexpr uint32_t kOpSource = static_cast<uint32_t>(GraphOpKind::kSource);
constexpr uint32_t kOpSingle = static_cast<uint32_t>(GraphOpKind::kSingle);
constexpr uint32_t kOpButterfly = static_cast<uint32_t>(GraphOpKind::kButterfly);
constexpr uint32_t kOpMerge = static_cast<uint32_t>(GraphOpKind::kMerge);
constexpr uint32_t kOpOutput = static_cast<uint32_t>(GraphOpKind::kOutput);

// Decodes op `index` of a packed program.
WP_HOST_DEVICE DeviceOp DecodeOp(const uint32_t* program, uint32_t index) {
  const uint32_t* w = program + static_cast<uint64_t>(index) * kOpWords;
  const uint32_t a = w[0], b = w[1];
  DeviceOp op;
  op.src = a & kOpSlotMask;
  op.kind = (a >> 21) & 7u;
  op.log_width = (a >> 24) & 31u;
  op.log_bit = (b >> 21) & 31u;
  op.node_base = w[2];
  op.unit_end = w[3];
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

// The op's units: one per node, per butterfly pair, or per output rank.
WP_HOST_DEVICE uint32_t OpUnits(const DeviceOp& op) { return op.kind == kOpButterfly ? op.width >> 1 : op.width; }

// Nodes an op emits (0 for kOutput).
WP_HOST_DEVICE uint32_t OpNodes(const DeviceOp& op) { return op.kind == kOpOutput ? 0u : op.width; }

// Work slots a chunk of the graph for m outputs uses (see the file comment): m for powers of two.
WP_HOST_DEVICE uint32_t WorkLabels(uint32_t m) {
  if (m <= 1) return 1;
  uint32_t half = 1;
  while (half * 2 < m) half *= 2;  // half < m <= 2 * half
  return 2 * half;
}

struct DeviceProgram {
  std::vector<uint32_t> words;       // kOpWords per op, grouped by super-step
  std::vector<uint32_t> step_begin;  // steps + 1 entries: the first op of each step, then ops
  uint32_t ops = 0;
  uint32_t steps = 0;                         // super-steps (barriers)
  uint32_t work_labels = 0;                   // slots per chunk: WorkLabels(graph_labels) (kWork)
  uint64_t units = 0;                         // all steps' units
  uint64_t nodes = 0;                         // node numbers used: [0, nodes)
  uint64_t source_nodes[2] = {~0ull, ~0ull};  // kSource node numbers (one per standalone copy)
  uint32_t max_step_units = 0;
  uint32_t max_step_ops = 0;
};

enum class ProgramLayout : uint8_t {
  kWork = 0,           // the work layout above: what the fill runs
  kSharedScratch = 1,  // graph_schedule.h's own (both copies in one scratch): the kernel before
                       // v2, kept for the model's comparisons and scratch-team tests
};

// The schedule of the graph for `graph_labels` outputs with ranks [0, ranks_needed) emitted,
// levelled into super-steps. With `levelled` false every op is its own step (the plain chain, for
// comparisons). With kSharedScratch output rank r does not sit in work slot r: scratch teams only.
// REQUIRES: 1 <= ranks_needed <= graph_labels <= kMaxChunkLabels.
DeviceProgram BuildDeviceProgram(uint32_t graph_labels, uint32_t ranks_needed, bool levelled = true,
                                 ProgramLayout layout = ProgramLayout::kWork);

// Checks what the fill kernel relies on and cannot check itself cheaply (team_executor.h
// TeamRunStep): steps + 1 ascending step bounds from 0 to ops, words for every op, each step's
// ops with running unit counts that start at its first op's units and grow by each op's units,
// known kinds, slots inside work_labels and node numbers below nodes, and a step's units times
// kMaxTeamChunks below 2^29 (item numbers). Run on every program before it is uploaded.
// Errors: INTERNAL naming the first step or op that breaks a rule.
Status CheckDeviceProgram(const DeviceProgram& program);

// The schedule's ops relocated into the work layout, in emission order (unlevelled, unpacked).
std::vector<GraphOp> WorkLayoutOps(uint32_t graph_labels, uint32_t ranks_needed);

// The most labels a chunk holds at once under a schedule: the scaffold labels still to be read
// plus the output labels emitted so far (a label is live from the op that writes it to the last op
// that reads it; an output stays for good). For WorkLayoutOps(m, m) it is WorkLabels(m) (= m for
// powers of two); for BuildGraphProgram(m, m), whose copies share one scratch, 1.5 * 2^level.
uint64_t FootprintLabels(const std::vector<GraphOp>& ops);

}  // namespace gpu
}  // namespace wipeproof

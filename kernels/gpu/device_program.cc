#include "kernels/gpu/device_program.h"

#include <algorithm>
#include <cassert>

namespace wipeproof {
namespace gpu {
namespace {

void Pack(const GraphOp& op, bool step_end, uint32_t* w) {
  assert(op.src <= kOpSlotMask && op.dst <= kOpSlotMask && op.width <= kOpSlotMask);
  w[0] = op.src | static_cast<uint32_t>(op.kind) << 21 | static_cast<uint32_t>(op.log_width) << 24 |
         (step_end ? kOpStepEnd : 0u);
  if (op.kind == GraphOpKind::kOutput) {
    // Copy A's outputs start at rank 0, copy B's at rank half; both sit at slot half.
    assert(op.node_base == 0 || op.node_base == op.src);
    w[1] = op.width | (op.node_base != 0 ? 1u << 26 : 0u);
    w[2] = 0;
  } else {
    w[1] = op.dst | static_cast<uint32_t>(op.log_bit) << 21;
    w[2] = static_cast<uint32_t>(op.node_base);
  }
}

// Slot ranges an op reads and writes (graph_schedule.h GraphOpKind).
struct Access {
  uint32_t read0 = 0, read0_n = 0, read1 = 0, read1_n = 0, write = 0, write_n = 0;
};

Access AccessOf(const GraphOp& op) {
  Access a;
  switch (op.kind) {
    case GraphOpKind::kSource:
      a.write = op.dst, a.write_n = 1;
      break;
    case GraphOpKind::kSingle:
      a.read0 = op.src, a.read0_n = op.width, a.write = op.dst, a.write_n = op.width;
      break;
    case GraphOpKind::kMerge:
      a.read0 = op.src, a.read0_n = op.width, a.read1 = op.dst, a.read1_n = op.width;
      a.write = op.dst, a.write_n = op.width;
      break;
    case GraphOpKind::kButterfly:
      a.read0 = op.dst, a.read0_n = op.width, a.write = op.dst, a.write_n = op.width;
      break;
    case GraphOpKind::kOutput:
      a.read0 = op.src, a.read0_n = op.width;
      break;
  }
  return a;
}

}  // namespace

DeviceProgram BuildDeviceProgram(uint32_t graph_labels, uint32_t ranks_needed, bool levelled) {
  const std::vector<GraphOp> ops = BuildGraphProgram(graph_labels, ranks_needed);
  const GraphShape shape = ShapeForChunkLabels(graph_labels);
  DeviceProgram p;
  p.ops = static_cast<uint32_t>(ops.size());
  int sources = 0;
  for (const GraphOp& op : ops) {
    if (op.kind == GraphOpKind::kOutput) continue;
    if (op.kind == GraphOpKind::kSource && sources < 2) p.source_nodes[sources++] = op.node_base;
    p.nodes = std::max<uint64_t>(p.nodes, op.node_base + op.width);
  }
  // Level of each op: one more than the level of the last op that wrote a slot it reads or
  // writes (RAW, WAW), and than the last op that read a slot it writes (WAR).
  std::vector<uint32_t> level(ops.size());
  uint32_t levels = 0;
  if (levelled) {
    std::vector<int32_t> last_write(shape.scratch_labels, -1), last_read(shape.scratch_labels, -1);
    for (size_t k = 0; k < ops.size(); ++k) {
      const Access a = AccessOf(ops[k]);
      int32_t l = 0;
      for (uint32_t s = a.read0; s < a.read0 + a.read0_n; ++s) l = std::max(l, last_write[s] + 1);
      for (uint32_t s = a.read1; s < a.read1 + a.read1_n; ++s) l = std::max(l, last_write[s] + 1);
      for (uint32_t s = a.write; s < a.write + a.write_n; ++s) l = std::max({l, last_write[s] + 1, last_read[s] + 1});
      for (uint32_t s = a.read0; s < a.read0 + a.read0_n; ++s) last_read[s] = std::max(last_read[s], l);
      for (uint32_t s = a.read1; s < a.read1 + a.read1_n; ++s) last_read[s] = std::max(last_read[s], l);
      for (uint32_t s = a.write; s < a.write + a.write_n; ++s) last_write[s] = l;
      level[k] = static_cast<uint32_t>(l);
      levels = std::max(levels, level[k] + 1);
    }
  } else {
    for (size_t k = 0; k < ops.size(); ++k) level[k] = static_cast<uint32_t>(k);
    levels = static_cast<uint32_t>(ops.size());
  }
  // Counting sort by level, program order kept within a level.
  std::vector<uint32_t> start(levels + 1, 0);
  for (uint32_t l : level) ++start[l + 1];
  for (uint32_t l = 0; l < levels; ++l) start[l + 1] += start[l];
  std::vector<uint32_t> order(ops.size());
  std::vector<uint32_t> next(start.begin(), start.end() - 1);
  for (size_t k = 0; k < ops.size(); ++k) order[next[level[k]]++] = static_cast<uint32_t>(k);
  p.words.resize(ops.size() * kOpWords);
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t k = order[i];
    const bool step_end = i + 1 == order.size() || level[order[i + 1]] != level[k];
    Pack(ops[k], step_end, p.words.data() + i * kOpWords);
  }
  p.steps = levels;
  return p;
}

}  // namespace gpu
}  // namespace wipeproof

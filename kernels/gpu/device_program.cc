#include "kernels/gpu/device_program.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "kernels/gpu/kernel_args.h"

namespace wipeproof {
namespace gpu {
namespace {

void Pack(const GraphOp& op, uint32_t unit_end, uint32_t* w) {
  assert(op.src <= kOpSlotMask && op.dst <= kOpSlotMask && op.width <= kOpSlotMask);
  w[0] = op.src | static_cast<uint32_t>(op.kind) << 21 | static_cast<uint32_t>(op.log_width) << 24;
  if (op.kind == GraphOpKind::kOutput) {
    // Copy A's outputs start at rank 0, copy B's at rank half, which is also their work slot.
    assert(op.node_base == 0 || op.node_base == op.src);
    w[1] = op.width | (op.node_base != 0 ? 1u << 26 : 0u);
    w[2] = 0;
  } else {
    w[1] = op.dst | static_cast<uint32_t>(op.log_bit) << 21;
    w[2] = static_cast<uint32_t>(op.node_base);
  }
  w[3] = unit_end;
}

uint32_t UnitsOf(const GraphOp& op) { return op.kind == GraphOpKind::kButterfly ? op.width / 2 : op.width; }

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

std::vector<GraphOp> WorkLayoutOps(uint32_t graph_labels, uint32_t ranks_needed) {
  std::vector<GraphOp> ops = BuildGraphProgram(graph_labels, ranks_needed);
  const uint32_t h = ShapeForChunkLabels(graph_labels).half;
  // Per standalone copy: phase 0 is its left standalone(level-1) in [0, h); the connector's first
  // layer is the one op writing slot h; everything after it ran in [h, 2h) and runs in the copy's
  // own half instead. Copy A's half is [0, h), copy B's [h, 2h).
  int copy = 0;
  bool after_connector = false;
  for (GraphOp& op : ops) {
    const uint32_t base = copy == 0 ? 0 : h;
    if (op.kind == GraphOpKind::kOutput) {
      op.src = op.dst = base;
      ++copy;
      after_connector = false;
    } else if (!after_connector && op.kind == GraphOpKind::kSingle && op.dst == h) {
      assert(op.src == 0 && op.width == h);
      op.src = op.dst = base;  // right[i] = node(left[i]) over left[i]
      after_connector = true;
    } else if (!after_connector) {
      op.src += base;
      op.dst += base;
    } else {
      op.src = op.src - h + base;
      op.dst = op.dst - h + base;
    }
  }
  return ops;
}

DeviceProgram BuildDeviceProgram(uint32_t graph_labels, uint32_t ranks_needed, bool levelled, ProgramLayout layout) {
  const std::vector<GraphOp> ops = layout == ProgramLayout::kWork ? WorkLayoutOps(graph_labels, ranks_needed)
                                                                  : BuildGraphProgram(graph_labels, ranks_needed);
  DeviceProgram p;
  p.work_labels =
      layout == ProgramLayout::kWork ? WorkLabels(graph_labels) : ShapeForChunkLabels(graph_labels).scratch_labels;
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
    std::vector<int32_t> last_write(p.work_labels, -1), last_read(p.work_labels, -1);
    for (size_t k = 0; k < ops.size(); ++k) {
      const Access a = AccessOf(ops[k]);
      assert(a.write + a.write_n <= p.work_labels && a.read0 + a.read0_n <= p.work_labels);
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
  p.step_begin.assign(start.begin(), start.end());
  uint32_t unit_end = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t k = order[i];
    if (i == 0 || level[order[i - 1]] != level[k]) unit_end = 0;
    unit_end += UnitsOf(ops[k]);
    Pack(ops[k], unit_end, p.words.data() + i * kOpWords);
    p.units += UnitsOf(ops[k]);
    p.max_step_units = std::max(p.max_step_units, unit_end);
  }
  for (uint32_t l = 0; l < levels; ++l) p.max_step_ops = std::max(p.max_step_ops, start[l + 1] - start[l]);
  p.steps = levels;
  return p;
}

Status CheckDeviceProgram(const DeviceProgram& p) {
  if (p.words.size() != static_cast<uint64_t>(p.ops) * kOpWords) {
    return InternalError("device program: " + std::to_string(p.words.size()) + " words for " + std::to_string(p.ops) +
                         " ops");
  }
  if (p.step_begin.size() != static_cast<uint64_t>(p.steps) + 1 || p.step_begin.front() != 0 ||
      p.step_begin.back() != p.ops) {
    return InternalError("device program: step bounds do not run from op 0 to op " + std::to_string(p.ops) + " in " +
                         std::to_string(p.steps) + " steps");
  }
  constexpr uint64_t kItemLimit = 1ull << 29;  // team_executor.h: item numbers k < 2^29
  for (uint32_t s = 0; s < p.steps; ++s) {
    const std::string where = "device program: step " + std::to_string(s);
    if (p.step_begin[s + 1] <= p.step_begin[s]) return InternalError(where + " has no ops");
    uint64_t units = 0;
    for (uint32_t k = p.step_begin[s]; k < p.step_begin[s + 1]; ++k) {
      const DeviceOp op = DecodeOp(p.words.data(), k);
      const std::string at = where + ", op " + std::to_string(k);
      if (op.kind > kOpOutput) return InternalError(at + ": unknown kind " + std::to_string(op.kind));
      units += OpUnits(op);
      if (OpUnits(op) == 0 || op.unit_end != units) {
        return InternalError(at + ": unit count " + std::to_string(op.unit_end) + ", expected " +
                             std::to_string(units));
      }
      const uint64_t reach = op.kind == kOpSource ? op.dst + 1ull
                                                  : std::max<uint64_t>(op.src, op.dst) + static_cast<uint64_t>(op.width);
      if (reach > p.work_labels) {
        return InternalError(at + ": slots up to " + std::to_string(reach) + " of " + std::to_string(p.work_labels));
      }
      if (op.kind != kOpOutput && static_cast<uint64_t>(op.node_base) + OpNodes(op) > p.nodes) {
        return InternalError(at + ": node numbers past " + std::to_string(p.nodes));
      }
    }
    if (units * kMaxTeamChunks >= kItemLimit) return InternalError(where + ": " + std::to_string(units) + " units");
  }
  return Status::Ok();
}

uint64_t FootprintLabels(const std::vector<GraphOp>& ops) {
  uint32_t slots = 0;
  for (const GraphOp& op : ops) {
    const Access a = AccessOf(op);
    slots = std::max({slots, a.read0 + a.read0_n, a.read1 + a.read1_n, a.write + a.write_n});
  }
  // Pass 1: each value's last use (-1: never read). A value lives in its slot from the op that
  // writes it to the last op that reads it; an output op's read is a use, and from then on its
  // labels count as emitted (kept for good, wherever they are).
  struct Value {
    int64_t birth, last_use;
  };
  std::vector<Value> values;
  std::vector<int64_t> current(slots, -1);                                    // value index held by each slot
  std::vector<std::vector<std::pair<uint32_t, int64_t>>> writes(ops.size());  // (slot, previous value)
  std::vector<uint64_t> emitted(ops.size(), 0);
  for (size_t t = 0; t < ops.size(); ++t) {
    const Access a = AccessOf(ops[t]);
    if (ops[t].kind == GraphOpKind::kOutput) emitted[t] = ops[t].width;
    for (uint32_t s = a.read0; s < a.read0 + a.read0_n; ++s) values[current[s]].last_use = static_cast<int64_t>(t);
    for (uint32_t s = a.read1; s < a.read1 + a.read1_n; ++s) values[current[s]].last_use = static_cast<int64_t>(t);
    for (uint32_t s = a.write; s < a.write + a.write_n; ++s) {
      writes[t].push_back({s, current[s]});
      current[s] = static_cast<int64_t>(values.size());
      values.push_back({static_cast<int64_t>(t), -1});
    }
  }
  // Pass 2: during op t memory holds the values live into it (born before t, used at t or
  // later), the values it writes into slots not freed by its own reads, and everything emitted.
  std::vector<int64_t> delta(ops.size() + 1, 0);
  for (const Value& v : values) {
    if (v.last_use > v.birth) {
      ++delta[v.birth + 1];
      --delta[v.last_use + 1];
    }
  }
  int64_t live_in = 0;
  uint64_t kept = 0, peak = 0;
  for (size_t t = 0; t < ops.size(); ++t) {
    live_in += delta[t];
    uint64_t fresh = 0;
    for (const auto& [slot, previous] : writes[t]) {
      fresh += previous < 0 || values[previous].last_use != static_cast<int64_t>(t);
    }
    peak = std::max(peak, static_cast<uint64_t>(live_in) + fresh + kept);
    kept += emitted[t];
  }
  return std::max(peak, kept);
}

}  // namespace gpu
}  // namespace wipeproof

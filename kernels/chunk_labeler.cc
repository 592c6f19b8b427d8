// Executes the graph schedule on the CPU (label-spec.md §3-§6). Layers of >= 16 nodes go through
// the batch hash (SIMD where available); smaller ones through the scalar node hash.
#include "kernels/chunk_labeler.h"

#include <cassert>
#include <cstring>

#include "kernels/blake3_compress.h"
#include "kernels/node_hash.h"

namespace wipeproof {
namespace {
constexpr uint32_t kZeroLabel[8] = {0, 0, 0, 0, 0, 0, 0, 0};
// Layers of 4..15 nodes are gathered into one batch: a 16-lane hash costs less than 4 scalar ones.
constexpr uint32_t kMinGatheredWidth = 4;
}  // namespace

ChunkLabeler::ChunkLabeler(SimdLevel simd, Cv0Table cv0) : simd_(simd), hash16_(SelectHash16(simd)), cv0_(cv0) {}

const std::vector<GraphOp>& ChunkLabeler::Program(uint32_t graph_labels, uint32_t ranks_needed) {
  if (graph_labels != program_m_ || ranks_needed != program_ranks_) {
    program_ = BuildGraphProgram(graph_labels, ranks_needed);
    program_m_ = graph_labels;
    program_ranks_ = ranks_needed;
  }
  return program_;
}

void ChunkLabeler::Label(const ChunkHashParams& params, uint32_t graph_labels, uint32_t rank_begin, uint32_t rank_end,
                         uint8_t* out) {
  assert(rank_begin < rank_end && rank_end <= graph_labels);
  GraphShape shape = ShapeForChunkLabels(graph_labels);
  size_t groups = (shape.scratch_labels + kLanes - 1) / kLanes;
  if (slab_.size() < groups * kGroupWords) slab_.assign(groups * kGroupWords, 0);
  params_ = &params;
  out_ = out;
  rank_begin_ = rank_begin;
  rank_end_ = rank_end;
  last_nodes_hashed_ = 0;
  for (const GraphOp& op : Program(graph_labels, rank_end)) Run(op);
}

void ChunkLabeler::GetLabel(uint32_t slot, uint32_t* words) const {
  const uint32_t* g = slab_.data() + static_cast<size_t>(slot / kLanes) * kGroupWords + slot % kLanes;
  for (int w = 0; w < 8; ++w) words[w] = g[w * kLanes];
}

void ChunkLabeler::SetLabel(uint32_t slot, const uint32_t* words) {
  uint32_t* g = slab_.data() + static_cast<size_t>(slot / kLanes) * kGroupWords + slot % kLanes;
  for (int w = 0; w < 8; ++w) g[w * kLanes] = words[w];
}

void ChunkLabeler::HashScalar(uint64_t node, bool source, const uint32_t* p0, const uint32_t* p1,
                              uint32_t* out) const {
  const ChunkHashParams& p = *params_;
  if (p.format == LabelFormat::kC1) {
    NodeHashC1(p.key, node, p0, p1, out);
    return;
  }
  // A source (no predecessors) is hashed under the source context key (spec §5).
  uint32_t cv0[8];
  if (node < cv0_.nodes) {
    std::memcpy(cv0, cv0_.words + node * 8, sizeof cv0);
  } else {
    Block0ChainingValue192(source ? p.src_key : p.key, node, cv0);
  }
  NodeHash192FromCv0(cv0, p0, p1, p.block2, out);
}

void ChunkLabeler::RunGathered(const GraphOp& op) {
  // A layer of 4..15 nodes starts at a multiple of its power-of-two width, so each operand is a
  // run of lanes inside one group: copy those lane runs into batch lanes 0..w-1, hash, copy back.
  alignas(64) uint32_t p0[kGroupWords] = {}, p1[kGroupWords] = {}, result[kGroupWords];
  const uint32_t w = op.width, bit = 1u << op.log_bit;
  const uint32_t* src = Group(op.src) + op.src % kLanes;
  uint32_t* dst = Group(op.dst) + op.dst % kLanes;
  for (int k = 0; k < 8; ++k) {
    const uint32_t* src_row = src + k * kLanes;
    const uint32_t* dst_row = dst + k * kLanes;
    switch (op.kind) {
      case GraphOpKind::kSingle:
        std::memcpy(p0 + k * kLanes, src_row, w * sizeof(uint32_t));
        break;
      case GraphOpKind::kMerge:
        std::memcpy(p0 + k * kLanes, src_row, w * sizeof(uint32_t));
        std::memcpy(p1 + k * kLanes, dst_row, w * sizeof(uint32_t));
        break;
      default:  // kButterfly: pred0 is the lower position
        for (uint32_t i = 0; i < w; ++i) {
          p0[k * kLanes + i] = dst_row[i & ~bit];
          p1[k * kLanes + i] = dst_row[i | bit];
        }
        break;
    }
  }
  hash16_(*params_, cv0_, p0, op.kind == GraphOpKind::kSingle ? nullptr : p1, 0, op.node_base, result);
  for (int k = 0; k < 8; ++k) std::memcpy(dst + k * kLanes, result + k * kLanes, w * sizeof(uint32_t));
}

void ChunkLabeler::Run(const GraphOp& op) {
  const uint32_t w = op.width;
  if (op.kind == GraphOpKind::kOutput) {
    // Ranks [node_base, node_base + w) live in slots [src, src + w).
    uint32_t first = static_cast<uint32_t>(op.node_base);
    uint32_t lo = first > rank_begin_ ? first : rank_begin_;
    uint32_t hi = first + w < rank_end_ ? first + w : rank_end_;
    for (uint32_t r = lo; r < hi; ++r) {
      uint32_t words[8];
      GetLabel(op.src + (r - first), words);
      uint8_t* dst = out_ + static_cast<size_t>(r - rank_begin_) * kLabelBytes;
      for (int i = 0; i < 8; ++i) StoreLe32(dst + 4 * i, words[i]);
    }
    return;
  }
  last_nodes_hashed_ += w;
  const uint64_t base = op.node_base;
  if (w >= static_cast<uint32_t>(kLanes)) {
    switch (op.kind) {
      case GraphOpKind::kSingle:
        for (uint32_t g = 0; g < w; g += kLanes) hash16_(*params_, cv0_, Group(op.src + g), nullptr, 0, base + g, Group(op.dst + g));
        return;
      case GraphOpKind::kMerge:
        for (uint32_t g = 0; g < w; g += kLanes)
          hash16_(*params_, cv0_, Group(op.src + g), Group(op.dst + g), 0, base + g, Group(op.dst + g));
        return;
      case GraphOpKind::kButterfly: {
        const uint32_t bit = 1u << op.log_bit;
        if (bit >= static_cast<uint32_t>(kLanes)) {
          // Groups g and g+bit hold each other's partners lane for lane; both read (lower, upper).
          alignas(64) uint32_t lower_out[kGroupWords];
          for (uint32_t g = 0; g < w; g += kLanes) {
            if (g & bit) continue;
            uint32_t* lower = Group(op.dst + g);
            uint32_t* upper = Group(op.dst + g + bit);
            hash16_(*params_, cv0_, lower, upper, 0, base + g, lower_out);
            hash16_(*params_, cv0_, lower, upper, 0, base + g + bit, upper);
            std::memcpy(lower, lower_out, sizeof lower_out);
          }
        } else {
          // Partners inside one group: lane l pairs with l^bit; pred0 is the lower lane.
          for (uint32_t g = 0; g < w; g += kLanes) {
            uint32_t* grp = Group(op.dst + g);
            hash16_(*params_, cv0_, grp, nullptr, bit, base + g, grp);
          }
        }
        return;
      }
      default:
        break;
    }
  }
  if (w >= kMinGatheredWidth && simd_ != SimdLevel::kPortable) {
    RunGathered(op);
    return;
  }
  // Narrowest layers (the recursion's leaves): scalar, reading every input before writing.
  switch (op.kind) {
    case GraphOpKind::kSource: {
      uint32_t label[8];
      HashScalar(base, /*source=*/true, kZeroLabel, kZeroLabel, label);
      SetLabel(op.dst, label);
      return;
    }
    case GraphOpKind::kSingle:
      for (uint32_t i = 0; i < w; ++i) {
        uint32_t in[8], label[8];
        GetLabel(op.src + i, in);
        HashScalar(base + i, false, in, kZeroLabel, label);
        SetLabel(op.dst + i, label);
      }
      return;
    case GraphOpKind::kMerge:
      for (uint32_t i = 0; i < w; ++i) {
        uint32_t a[8], b[8], label[8];
        GetLabel(op.src + i, a);
        GetLabel(op.dst + i, b);
        HashScalar(base + i, false, a, b, label);
        SetLabel(op.dst + i, label);
      }
      return;
    case GraphOpKind::kButterfly: {
      const uint32_t bit = 1u << op.log_bit;
      for (uint32_t i = 0; i < w; ++i) {
        if (i & bit) continue;
        uint32_t a[8], b[8], la[8], lb[8];
        GetLabel(op.dst + i, a);
        GetLabel(op.dst + i + bit, b);
        HashScalar(base + i, false, a, b, la);
        HashScalar(base + i + bit, false, a, b, lb);
        SetLabel(op.dst + i, la);
        SetLabel(op.dst + i + bit, lb);
      }
      return;
    }
    default:
      return;
  }
}

}  // namespace wipeproof

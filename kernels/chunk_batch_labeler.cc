#include "kernels/chunk_batch_labeler.h"

#include <cassert>
#include <cstring>

#include "kernels/blake3_compress.h"
#include "kernels/node_hash.h"

namespace wipeproof {
namespace {
alignas(64) constexpr uint32_t kZeroRow[kGroupWords] = {};
}  // namespace

ChunkBatchLabeler::ChunkBatchLabeler(SimdLevel simd, Cv0Table cv0)
    : simd_(simd), hash_(SelectHashAcross(simd)), cv0_(cv0) {}

void ChunkBatchLabeler::Cv0ForNode(uint64_t node, bool source, uint32_t cv0[8]) const {
  if (!source && node < cv0_.nodes) {
    std::memcpy(cv0, cv0_.words + node * 8, 32);
    return;
  }
  Block0ChainingValue192(source ? src_key_ : int_key_, node, cv0);
}

void ChunkBatchLabeler::Label(uint32_t graph_labels, const Chunk* chunks, int count) {
  assert(count >= 1 && count <= kMaxChunks);
  uint32_t ranks_needed = 0;
  batch_.format = chunks[0].params.format;
  for (int l = 0; l < kLanes; ++l) {
    // Idle lanes repeat lane 0's keys; their results are never written out.
    const ChunkHashParams& p = chunks[l < count ? l : 0].params;
    for (int w = 0; w < 8; ++w) batch_.key[w][l] = p.key[w];
    for (int w = 0; w < 16; ++w) batch_.block2[w][l] = p.block2[w];
    if (l < count && chunks[l].rank_end > ranks_needed) ranks_needed = chunks[l].rank_end;
  }
  if (batch_.format == LabelFormat::k192) {
    std::memcpy(int_key_, chunks[0].params.key, sizeof int_key_);
    std::memcpy(src_key_, chunks[0].params.src_key, sizeof src_key_);
  }
  if (graph_labels != program_m_ || ranks_needed != program_ranks_) {
    program_ = BuildGraphProgram(graph_labels, ranks_needed);
    program_m_ = graph_labels;
    program_ranks_ = ranks_needed;
  }
  const size_t words = static_cast<size_t>(ShapeForChunkLabels(graph_labels).scratch_labels) * kGroupWords;
  if (rows_.size() < words) rows_.assign(words, 0);

  const bool c1 = batch_.format == LabelFormat::kC1;
  uint32_t cv0[8] = {};
  alignas(64) uint32_t lower_out[kGroupWords];
  for (const GraphOp& op : program_) {
    const uint32_t w = op.width;
    const uint64_t base = op.node_base;
    switch (op.kind) {
      case GraphOpKind::kSource:
        if (!c1) Cv0ForNode(base, true, cv0);
        hash_(batch_, cv0, kZeroRow, nullptr, base, Row(op.dst));
        break;
      case GraphOpKind::kSingle:
        for (uint32_t i = 0; i < w; ++i) {
          if (!c1) Cv0ForNode(base + i, false, cv0);
          hash_(batch_, cv0, Row(op.src + i), nullptr, base + i, Row(op.dst + i));
        }
        break;
      case GraphOpKind::kMerge:
        for (uint32_t i = 0; i < w; ++i) {
          if (!c1) Cv0ForNode(base + i, false, cv0);
          hash_(batch_, cv0, Row(op.src + i), Row(op.dst + i), base + i, Row(op.dst + i));
        }
        break;
      case GraphOpKind::kButterfly: {
        const uint32_t bit = 1u << op.log_bit;
        for (uint32_t i = 0; i < w; ++i) {
          if (i & bit) continue;
          uint32_t* a = Row(op.dst + i);
          uint32_t* b = Row(op.dst + i + bit);
          if (!c1) Cv0ForNode(base + i, false, cv0);
          hash_(batch_, cv0, a, b, base + i, lower_out);
          if (!c1) Cv0ForNode(base + i + bit, false, cv0);
          hash_(batch_, cv0, a, b, base + i + bit, b);
          std::memcpy(a, lower_out, sizeof lower_out);
        }
        break;
      }
      case GraphOpKind::kOutput: {
        const uint32_t first = static_cast<uint32_t>(base);
        for (int l = 0; l < count; ++l) {
          const Chunk& chunk = chunks[l];
          uint32_t lo = first > chunk.rank_begin ? first : chunk.rank_begin;
          uint32_t hi = first + w < chunk.rank_end ? first + w : chunk.rank_end;
          for (uint32_t r = lo; r < hi; ++r) {
            const uint32_t* row = Row(op.src + (r - first));
            uint8_t* dst = chunk.out + static_cast<size_t>(r - chunk.rank_begin) * kLabelBytes;
            for (int k = 0; k < 8; ++k) StoreLe32(dst + 4 * k, row[k * kLanes + l]);
          }
        }
        break;
      }
    }
  }
}

}  // namespace wipeproof

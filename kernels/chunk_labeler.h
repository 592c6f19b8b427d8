// Labels one chunk: runs the graph schedule (graph_schedule.h) over a scratch of 2^level labels
// and writes only the requested output ranks (label-spec.md §3, §6). Scratch never holds more than
// the chunk's live set, 2*half labels (64 KiB at m = 2^10, 512 KiB at m = 2^14, 32 MiB at 2^20).
//
// Thread-safety: thread-compatible. Use one ChunkLabeler per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/graph_schedule.h"
#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"

namespace wipeproof {

class ChunkLabeler {
 public:
  // `cv0` is the optional 192 block-0 cache (cv0_cache.h); it must outlive the labeler.
  explicit ChunkLabeler(SimdLevel simd = BestSimdLevel(), Cv0Table cv0 = {});

  // Writes the labels of output ranks [rank_begin, rank_end) of the graph for `graph_labels`
  // outputs, keyed by `params`, to `out` (32 bytes each, rank_begin first).
  // REQUIRES: 1 <= graph_labels <= kMaxChunkLabels, rank_begin < rank_end <= graph_labels.
  void Label(const ChunkHashParams& params, uint32_t graph_labels, uint32_t rank_begin, uint32_t rank_end,
             uint8_t* out);

  SimdLevel simd() const { return simd_; }
  const Cv0Table& cv0() const { return cv0_; }
  // Node hashes evaluated by the last Label() call (less than the spec's node count when the tail
  // of copy B is not needed).
  uint64_t last_nodes_hashed() const { return last_nodes_hashed_; }

 private:
  void Run(const GraphOp& op);
  void RunGathered(const GraphOp& op);
  void HashScalar(uint64_t node, bool source, const uint32_t* p0, const uint32_t* p1, uint32_t* out) const;
  uint32_t* Group(uint32_t slot) { return slab_.data() + static_cast<size_t>(slot / kLanes) * kGroupWords; }
  void GetLabel(uint32_t slot, uint32_t* words) const;
  void SetLabel(uint32_t slot, const uint32_t* words);
  const std::vector<GraphOp>& Program(uint32_t graph_labels, uint32_t ranks_needed);

  SimdLevel simd_;
  Hash16Fn hash16_;
  Cv0Table cv0_;
  const ChunkHashParams* params_ = nullptr;
  std::vector<uint32_t> slab_;  // word-sliced groups of 16 labels
  uint8_t* out_ = nullptr;
  uint32_t rank_begin_ = 0, rank_end_ = 0;
  uint64_t last_nodes_hashed_ = 0;
  // The schedule of the last (graph_labels, ranks_needed), replayed for every chunk.
  uint32_t program_m_ = 0, program_ranks_ = 0;
  std::vector<GraphOp> program_;
};

}  // namespace wipeproof

// Labels up to 16 chunks of one graph at once, lane l of every SIMD word holding chunk l
// ("lane per chunk"). The schedule is replayed once for the whole batch, so every layer, even the
// width-1 leaves of the recursion that a single chunk must hash one node at a time, runs at full
// SIMD width. The region labeler uses it for the bulk of a fill; ChunkLabeler (one chunk, SIMD
// across a layer) serves verifiers and remainders. Same bytes either way (label-spec.md §3-§6).
//
// Scratch: 16 x 2^level labels (8 MiB at m = 2^14).
// Thread-safety: thread-compatible; one per thread.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/graph_schedule.h"
#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"

namespace wipeproof {

class ChunkBatchLabeler {
 public:
  static constexpr int kMaxChunks = kLanes;

  // One chunk of the batch: its key material and the output ranks [rank_begin, rank_end) to
  // write to `out` (32 bytes each, rank_begin first).
  struct Chunk {
    ChunkHashParams params;
    uint32_t rank_begin = 0;
    uint32_t rank_end = 0;
    uint8_t* out = nullptr;
  };

  explicit ChunkBatchLabeler(SimdLevel simd = BestSimdLevel(), Cv0Table cv0 = {});

  // Labels `count` chunks (1..16) whose graphs all have `graph_labels` outputs and one format.
  // REQUIRES: every chunk's 0 <= rank_begin < rank_end <= graph_labels.
  void Label(uint32_t graph_labels, const Chunk* chunks, int count);

 private:
  uint32_t* Row(uint32_t slot) { return rows_.data() + static_cast<size_t>(slot) * kGroupWords; }
  void Cv0ForNode(uint64_t node, bool source, uint32_t cv0[8]) const;

  SimdLevel simd_;
  HashAcrossFn hash_;
  Cv0Table cv0_;
  ChunkBatchParams batch_{};
  uint32_t int_key_[8] = {}, src_key_[8] = {};
  std::vector<uint32_t> rows_;  // slot-major rows of 16 lanes x 8 words
  uint32_t program_m_ = 0, program_ranks_ = 0;
  std::vector<GraphOp> program_;
};

}  // namespace wipeproof

// The verifier's entry point: recompute every output label of one chunk of a session
// (label-spec.md §6). A challenger checking several labels of one chunk pays once.
// Thread-safety: thread-safe (each call uses its own labeler).
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "kernels/label_spec.h"
#include "kernels/region_labeler.h"
#include "kernels/simd/hash16.h"

namespace wipeproof {

struct ChunkOutputs {
  uint64_t chunk = 0;
  uint64_t first_label = 0;      // global index of rank 0: chunk * m
  uint32_t graph_labels = 0;     // m, or m' for a 192 trailing partial chunk
  std::vector<uint8_t> labels;   // graph_labels * 32 bytes, rank order
};

// Recomputes chunk `chunk` of a region ending at global index `region_end` (exclusive; only the
// 192 format's trailing partial chunk depends on it).
// Errors: INVALID_ARGUMENT when m is out of range or the chunk starts at or after region_end.
StatusOr<ChunkOutputs> RecomputeChunk(LabelFormat format, const uint8_t seed[kSeedBytes], uint32_t chunk_labels,
                                      uint64_t chunk, uint64_t region_end, SimdLevel simd = BestSimdLevel());

}  // namespace wipeproof

namespace wipeproof {

// Recomputes the labels at `n` global indices of a region (what a challenger expects), grouping
// them by chunk and recomputing the chunks 16 at a time on `threads` threads (0 = all cores).
// out receives n * 32 bytes in request order. Cost: one chunk graph per distinct chunk, truncated
// after the highest rank requested in it.
// Errors: INVALID_ARGUMENT for a bad region or an index outside [first, first + count).
Status RecomputeLabels(const RegionSpec& region, const uint64_t* indices, size_t n, uint8_t* out, int threads = 0,
                       SimdLevel simd = BestSimdLevel());

}  // namespace wipeproof

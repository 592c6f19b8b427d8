// Labels a region: the global label indices [first, first + count) of one session, written to a
// caller's buffer, chunks spread over a pool of worker threads (label-spec.md §2, §6).
//
// Partial chunks (spec §2): in c1 every chunk is the full graph for m and a partial chunk stores
// only the ranks it covers, so a label depends on (format, seed, m, g) alone. In 192 the region's
// trailing partial chunk of k < m labels is the graph for m' = k.
//
// Thread-safety: LabelRegion is thread-safe (it owns its workers); `out` must not be touched by
// others while it runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"

namespace wipeproof {

struct RegionSpec {
  LabelFormat format = LabelFormat::kC1;
  uint8_t seed[kSeedBytes] = {};
  uint32_t chunk_labels = 0;  // m, in [1, 2^20]
  uint64_t first = 0;         // first global label index
  uint64_t count = 0;         // labels in the region
};

struct RegionLabelOptions {
  int threads = 0;                        // 0: all hardware threads
  SimdLevel simd = BestSimdLevel();
  // Called from one worker at most every ~100 ms and once at the end with (labels done, total).
  std::function<void(uint64_t, uint64_t)> progress;
  // When set to true by another thread, workers stop after their current chunk.
  const std::atomic<bool>* cancel = nullptr;
};

// The graph size of chunk `chunk` inside a region ending at `region_end` (spec §2).
uint32_t GraphLabelsForChunk(LabelFormat format, uint32_t chunk_labels, uint64_t chunk, uint64_t region_end);

// Validates a region: m in range, count >= 1, no overflow of the index space.
// Errors: INVALID_ARGUMENT naming the field.
Status ValidateRegion(const RegionSpec& region);

// Writes region.count labels (32 bytes each) to `out`, label g at out + 32*(g - first).
// Errors: INVALID_ARGUMENT from ValidateRegion; FAILED_PRECONDITION ("cancelled") when cancelled.
// The bytes are equal for every thread count and, for c1, for every split of the range.
Status LabelRegion(const RegionSpec& region, uint8_t* out, const RegionLabelOptions& options = {});

}  // namespace wipeproof

// Labels a region: the global label indices [first, first + count) of one session, written to a
// caller's buffer, chunks spread over a pool of worker threads (label-spec.md §2, §6).
//
// Partial chunks: see GraphLabelsForChunk (kernels/label_spec.h).
//
// Thread-safety: LabelRegion is thread-safe (it owns its workers); `out` must not be touched by
// others while it runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/status.h"
#include "kernels/label_spec.h"  // RegionSpec, ValidateRegion
#include "kernels/simd/hash16.h"

namespace wipeproof {

struct RegionLabelOptions {
  int threads = 0;                        // 0: all hardware threads
  SimdLevel simd = BestSimdLevel();
  // Called from one worker at most every ~100 ms and once at the end with (labels done, total).
  std::function<void(uint64_t, uint64_t)> progress;
  // When set to true by another thread, workers stop after their current chunk.
  const std::atomic<bool>* cancel = nullptr;
};

// Writes region.count labels (32 bytes each) to `out`, label g at out + 32*(g - first).
// Errors: INVALID_ARGUMENT from ValidateRegion; FAILED_PRECONDITION ("cancelled") when cancelled.
// The bytes are equal for every thread count and, for c1, for every split of the range.
Status LabelRegion(const RegionSpec& region, uint8_t* out, const RegionLabelOptions& options = {});

}  // namespace wipeproof

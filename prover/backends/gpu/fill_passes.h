// How a fill is cut into passes and launches (the policy; device_region.h executes it).
//
// Team shape. A team is G threads labeling C chunks (team_executor.h); r = G / C threads per
// chunk. Lane utilisation falls as r grows (narrow layers give each chunk only 1..8 nodes per
// op), scratch per thread falls with it: at m = 2^14, r = 1, 2, 4, 8, 16, 32 use 100, 97, 89,
// 73, 53, 33% of the lanes (docs/kernels.md). ChooseTeamShape takes the smallest r that still
// gives `target_threads` threads for the chunks the scratch can hold.
//
// Scratch placement. A chunk's live set is 2^level labels (512 KiB at m = 2^14, 4 MiB at 2^17),
// and enough threads need thousands of chunks in flight: gigabytes, far more than 256 MiB. So
// the main passes keep their scratch in the region's own not-yet-labeled tail (and in acquired
// memory beyond the plan's count), and label only chunks whose slots lie below it; each next
// pass may use at most half of what is still unlabeled, and the final pass runs in the *side
// scratch*, a separate allocation of at most 256 MiB that also holds the program and tables and is
// freed when the fill returns. Thus no scratch is left unlabeled when the fill is reported, and
// the memory outside the proof during the fill is the side scratch alone.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {
namespace gpu {

struct FillTuning {
  uint64_t target_threads = 0;       // threads to keep busy; 0: multiprocessors * 1024
  uint32_t threads_per_chunk = 0;    // r; 0: ChooseTeamShape decides
  uint32_t team_threads = 0;         // G; 0: max(64, r)
  uint32_t max_team_threads = 256;   // cap on G chosen automatically
  uint32_t max_chunks_per_team = 0;  // cap on C; 0: the driver derives it from the piece size
  // Sizes the in-region scratch: room for target_threads / this chunks (capped below). With
  // super-steps, 8 threads per chunk keep ~91% of lanes busy at m = 2^14.
  uint32_t preferred_threads_per_chunk = 8;
  bool in_region_scratch = true;  // false: every pass uses the side scratch (slow, for tests)
  // Cap on the in-region scratch. More scratch means fewer threads per chunk (better lane use) but
  // one more tail pass per doubling: each costs about one chunk's latency (docs/kernels.md).
  uint64_t max_region_scratch_bytes = 16 * kGiB;
  uint64_t side_scratch_bytes = 256 * kMiB;  // the only scratch outside the proof
  bool shared_scratch = true;                // team scratch in shared memory when it fits (tiny m)
  uint64_t max_shared_scratch_bytes = 48 * 1024;
  uint64_t cv0_side_max_bytes = 64 * kMiB;  // 192: block-0 table in the side scratch (rest computed)
  uint64_t max_wave_chunks = 0;             // cap on chunks per launch (progress granularity); 0: none
};

struct TeamShape {
  uint32_t threads = 0;  // G
  uint32_t chunks = 0;   // C
};

// Shape for a pass that can hold at most `max_chunks` chunks' scratch at once.
// REQUIRES: max_chunks >= 1.
TeamShape ChooseTeamShape(uint64_t max_chunks, uint64_t target_threads, const FillTuning& tuning);

// Places up to `want` blocks of `block_bytes` (256-byte aligned) in the memory of slots
// [limit_slot, top_slot), from the top down, each inside one piece. Returns their device
// addresses (highest first) and sets *lowest_slot to the first slot any of them touches
// (top_slot when none was placed).
std::vector<uint64_t> PlaceFromTop(const SlotMap& map, uint64_t limit_slot, uint64_t top_slot, uint64_t block_bytes,
                                   uint64_t want, uint64_t* lowest_slot);

// The chunks of a region, in order, with their clipped slot ranges (region slot = global - first).
struct RegionChunks {
  uint64_t first = 0, count = 0;
  uint32_t m = 0;
  uint64_t chunk_begin = 0;  // first chunk overlapping the region
  uint64_t main_end = 0;     // chunks [chunk_begin, main_end) run the main program (graph m)
  bool partial_192 = false;  // chunk main_end is a 192 trailing partial chunk (graph m' < m)
  uint32_t partial_graph_labels = 0;

  uint64_t SlotBegin(uint64_t chunk) const { return chunk * m > first ? chunk * m - first : 0; }
  uint64_t SlotEnd(uint64_t chunk) const {
    const uint64_t end = chunk * m + m - first;
    return end < count ? end : count;
  }
};

RegionChunks DescribeRegion(bool format_192, uint32_t m, uint64_t first, uint64_t count);

}  // namespace gpu
}  // namespace wipeproof

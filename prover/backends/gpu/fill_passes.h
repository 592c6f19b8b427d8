// How a fill is cut into launches (the policy; device_region.h executes it).
//
// In place. A chunk of m outputs needs exactly m work slots when m is a power of two
// (device_program.h: the footprint, replayed from the schedule, is m; WorkLabels(m) - m more
// otherwise), so whole chunks are labelled in their own label slots: no scratch anywhere else,
// no region tail to label afterwards, and as many chunks in flight as there are threads for.
// The only memory outside the plan's label slots is the *side scratch* (<= 256 MiB, freed before
// Fill returns): the packed programs, the slot and team tables, the 192 block-0 table when it
// fits, and the work labels of *scratch teams*: chunks the region holds only part of (c1 ranges
// that start or end inside a chunk; 192's trailing partial chunk, its own graph), the extra
// WorkLabels(m) - m slots of each in-place chunk when m is not a power of two, and every chunk
// of GPU-filled host memory (whose labels must sit in the natural layout).
//
// Waves. One launch runs one *wave*: at most the resident teams of the device, all started at
// once, each C chunks of one graph in lockstep. A wave's time is its busiest multiprocessor's
// work, so the planner splits the chunks into the fewest waves the device holds and spreads them
// evenly: every wave gets N / waves chunks, every team of a wave C or C + 1 (team_executor.h
// divides by any C), the teams with C + 1 first, so consecutive blocks (placed round-robin on
// the multiprocessors) balance them. No wave is a runt. Where a wave has fewer chunks than
// resident teams it gets teams of more threads (up to max_team_threads) and one chunk each:
// shorter chunk latency when the device cannot be filled (tiny fills, the 192 deferred chunks).
//
// 192 block-0 table. The table (32 bytes per node number: 1.16 GB at m = 2^17) sits in the side
// scratch when it fits; otherwise in the top of the plan's own label slots, whose chunks are then
// *deferred*: labelled in their own waves after every other chunk, with the side scratch's prefix
// of the table (the rest of block 0 computed).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/gpu/label_places.h"
#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {
namespace gpu {

struct FillTuning {
  uint32_t team_threads = 64;                // G of full waves (two NVIDIA warps, one AMD wavefront)
  uint32_t max_chunks_per_team = 16;         // C cap (replayed lane use at C = 16: 0.996 at 2^14, 0.997 at 2^17)
  uint32_t threads_per_chunk = 0;            // > 0: C = team_threads / threads_per_chunk exactly (sweeps)
  uint32_t max_team_threads = 256;           // G cap for waves with fewer chunks than resident teams
  uint64_t target_threads = 0;               // > 0: caps resident threads per wave (sweeps); 0: occupancy decides
  uint32_t teams_per_slot = 1;               // a launch's teams per resident team slot: > 1 launches more teams
                                             // than fit, and the device starts each as another ends (sweeps)
  bool in_place = true;                      // false: every chunk in a scratch team (tests, comparisons)
  bool cv0_in_region = true;                 // 192: the block-0 table may defer chunks (see the file comment)
  uint64_t side_scratch_bytes = 256 * kMiB;  // cap on the only memory outside the plan's label slots
  uint64_t cv0_side_max_bytes = ~0ull;       // 192: cap on the block-0 table in the side scratch
  uint64_t max_wave_chunks = 0;              // cap on chunks per launch (progress granularity); 0: none
};

struct TeamShape {
  uint32_t threads = 0;  // G
  uint32_t chunks = 0;   // C
};

// The chunks of a region, in order (region slot = global index - first).
struct RegionChunks {
  uint64_t first = 0, count = 0;
  uint32_t m = 0;
  uint64_t chunk_begin = 0;  // first chunk overlapping the region
  uint64_t chunk_end = 0;    // one past the last chunk overlapping the region
  uint64_t whole_begin = 0;  // chunks [whole_begin, whole_end) lie wholly inside the region
  uint64_t whole_end = 0;
  bool format_192 = false;

  uint64_t SlotBegin(uint64_t chunk) const { return chunk * m > first ? chunk * m - first : 0; }
  uint64_t SlotEnd(uint64_t chunk) const {
    const uint64_t end = chunk * m + m - first;
    return end < count ? end : count;
  }
  // Chunks only partly inside the region (at most one at each end, the same one when the
  // region lies inside a chunk), in order.
  std::vector<uint64_t> PartialChunks() const;

  // The graph chunk `chunk` runs: m outputs with all ranks for whole chunks; for a chunk the
  // region ends inside, c1 the graph m truncated after the last rank it holds (graph_schedule.h:
  // the same labels), 192 the graph m' = what the region holds of it (spec §2).
  struct Graph {
    uint32_t graph_labels = 0;
    uint32_t ranks_needed = 0;
  };
  Graph GraphOf(uint64_t chunk) const;
};

RegionChunks DescribeRegion(bool format_192, uint32_t m, uint64_t first, uint64_t count);

// One team of a planned wave.
struct PlannedTeam {
  uint64_t first_chunk = 0;
  uint32_t chunks = 0;
  bool scratch = false;  // works in the side scratch (kernel_args.h TeamDesc)
  uint32_t graph = 0;    // 0: graph m; 1: the last chunk's own graph (RegionChunks::GraphOf)
};

struct PlannedWave {
  std::string phase;  // "main", "deferred" (192, after the block-0 table's last use)
  uint32_t team_threads = 0;
  std::vector<PlannedTeam> teams;
  uint64_t Chunks() const;
  uint32_t MaxTeamChunks() const;
};

// A run of in-place teams: chunks [chunk_begin, chunk_end), team j taking
// chunk_begin + j*C ... (the last one fewer). label_layout.h maps indices through these.
using LayoutRun = PlaceRun;  // kernels/gpu/label_places.h: the lookup kernel reads them too

// What a wave may hold.
struct WaveLimits {
  // Resident teams of `threads` threads per launch (the occupancy calculator times the
  // multiprocessors, capped by target_threads).
  std::function<uint64_t(uint32_t threads)> resident_teams;
  uint32_t team_threads = 64;
  uint32_t max_team_threads = 256;
  uint32_t max_chunks_per_team = 16;
  uint32_t fixed_chunks_per_team = 0;  // > 0: exactly this C (threads_per_chunk sweeps)
  uint64_t max_wave_chunks = ~0ull;    // side scratch room (scratch or extra work labels) or tuning
};

// Plans chunks [begin, end) as even waves (see the file comment) and appends them to *waves,
// their in-place runs to *runs (unless `scratch`). `first_wave_extra` teams (scratch teams of
// partial chunks, already in the last wave of *waves when that wave is open) are left room for
// in the first wave. REQUIRES: limits.resident_teams(limits.team_threads) >= 1.
void PlanEvenWaves(uint64_t begin, uint64_t end, const std::string& phase, bool scratch, const WaveLimits& limits,
                   std::vector<PlannedWave>* waves, std::vector<LayoutRun>* runs, uint32_t first_wave_extra = 0);

// Launches sized in seconds. A GPU whose driver kills long kernels (gpu_runtime.h
// GpuDeviceProps::kernel_time_limited: one driving a display) gets launches planned to take about
// kTimeLimitedLaunchSeconds, from its raw compression rate (GpuRuntime::MeasureCompressionRate)
// at kTimeLimitedFillShare of it: low on purpose (fills reach ~0.6-0.9 of the raw rate in the
// device model), so a launch takes that long or less. wipeproof-gpu-check's --launch-seconds uses
// the same rule with its own share.
constexpr double kTimeLimitedLaunchSeconds = 1.0;
constexpr double kTimeLimitedFillShare = 0.25;

// Compressions one chunk of `program` costs: one per node (c1), three per node for 192 (block 0
// computed: the most it costs).
uint64_t CompressionsPerChunk(bool format_192, uint64_t program_nodes);

// Chunks a launch may hold to take about `seconds` at `compressions_per_s`: at least 1.
uint64_t WaveChunksForSeconds(double seconds, double compressions_per_s, uint64_t compressions_per_chunk);

// Places up to `want` blocks of `block_bytes` (256-byte aligned) in the memory of slots
// [limit_slot, top_slot), from the top down, each inside one piece. Returns their device
// addresses (highest first) and sets *lowest_slot to the first slot any of them touches
// (top_slot when none was placed).
std::vector<uint64_t> PlaceFromTop(const SlotMap& map, uint64_t limit_slot, uint64_t top_slot, uint64_t block_bytes,
                                   uint64_t want, uint64_t* lowest_slot);

}  // namespace gpu
}  // namespace wipeproof

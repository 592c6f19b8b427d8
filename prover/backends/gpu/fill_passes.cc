#include "prover/backends/gpu/fill_passes.h"

#include <algorithm>

namespace wipeproof {
namespace gpu {
namespace {

uint64_t FloorPow2(uint64_t v) {
  uint64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

}  // namespace

TeamShape ChooseTeamShape(uint64_t max_chunks, uint64_t target_threads, const FillTuning& tuning) {
  uint64_t r = tuning.threads_per_chunk;
  if (r == 0) {
    r = FloorPow2(std::max<uint64_t>(1, target_threads / std::max<uint64_t>(1, max_chunks)));
    r = std::min<uint64_t>(r, std::max<uint32_t>(1, tuning.max_team_threads));
  }
  uint64_t g = tuning.team_threads ? tuning.team_threads : std::max<uint64_t>(64, r);
  g = std::max(g, r);
  TeamShape shape;
  shape.threads = static_cast<uint32_t>(g);
  uint64_t c = std::min<uint64_t>(g / r, max_chunks);
  if (tuning.max_chunks_per_team > 0) c = std::min<uint64_t>(c, tuning.max_chunks_per_team);
  shape.chunks = static_cast<uint32_t>(std::max<uint64_t>(1, c));
  return shape;
}

std::vector<uint64_t> PlaceFromTop(const SlotMap& map, uint64_t limit_slot, uint64_t top_slot, uint64_t block_bytes,
                                   uint64_t want, uint64_t* lowest_slot) {
  std::vector<uint64_t> placed;
  *lowest_slot = top_slot;
  const auto& begin = map.slot_begin();
  for (int64_t i = static_cast<int64_t>(map.pieces()) - 1; i >= 0 && placed.size() < want; --i) {
    const uint64_t b = begin[i], e = std::min(begin[i + 1], top_slot);
    if (e <= limit_slot || e <= b) continue;
    const uint64_t base = map.bases()[i];
    const uint64_t lo = base + (std::max(b, limit_slot) - b) * 32;
    uint64_t hi = base + (e - b) * 32;
    while (placed.size() < want && hi >= lo + block_bytes) {
      const uint64_t addr = (hi - block_bytes) & ~uint64_t{255};
      if (addr < lo) break;
      placed.push_back(addr);
      *lowest_slot = b + (addr - base) / 32;
      hi = addr;
    }
  }
  return placed;
}

RegionChunks DescribeRegion(bool format_192, uint32_t m, uint64_t first, uint64_t count) {
  RegionChunks r;
  r.first = first;
  r.count = count;
  r.m = m;
  const uint64_t end = first + count;
  r.chunk_begin = first / m;
  const uint64_t chunk_last = (end - 1) / m;
  r.main_end = chunk_last + 1;
  // 192 (spec §2): the trailing partial chunk is the graph for m' = end - chunk start.
  if (format_192 && end % m != 0) {
    r.partial_192 = true;
    r.main_end = chunk_last;
    r.partial_graph_labels = static_cast<uint32_t>(end - chunk_last * m);
  }
  return r;
}

}  // namespace gpu
}  // namespace wipeproof

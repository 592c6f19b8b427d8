#include "prover/backends/gpu/label_layout.h"

#include <algorithm>
#include <cassert>

namespace wipeproof {
namespace gpu {

void LabelLayout::AddRuns(const std::vector<LayoutRun>& runs) {
  for (const LayoutRun& r : runs) {
    assert(r.chunk_begin * m_ >= first_ && r.chunk_end * m_ <= first_ + count_ && r.chunks_per_team > 0);
    assert(runs_.empty() || runs_.back().chunk_end <= r.chunk_begin);
    runs_.push_back(r);
  }
}

void LabelLayout::Locate(uint64_t g, Half halves[2]) const {
  const uint64_t chunk = g / m_, rank = g % m_;
  // The last run starting at or before the chunk.
  auto it = std::upper_bound(runs_.begin(), runs_.end(), chunk,
                             [](uint64_t c, const LayoutRun& r) { return c < r.chunk_begin; });
  if (it != runs_.begin() && chunk < std::prev(it)->chunk_end) {
    const LayoutRun& r = *std::prev(it);
    const uint64_t team_first = r.chunk_begin + (chunk - r.chunk_begin) / r.chunks_per_team * r.chunks_per_team;
    const uint64_t C = std::min<uint64_t>(r.chunks_per_team, r.chunk_end - team_first);
    const uint64_t block_slot = team_first * m_ - first_;
    for (int h = 0; h < 2; ++h) {
      const uint64_t unit = (rank * 2 + h) * C + (chunk - team_first);
      halves[h].slot = block_slot + unit / 2;
      halves[h].byte_offset = static_cast<uint32_t>(unit & 1) * 16;
    }
    return;
  }
  halves[0] = {g - first_, 0};
  halves[1] = {g - first_, 16};
}

}  // namespace gpu
}  // namespace wipeproof

#include "prover/backends/gpu/label_layout.h"

#include <algorithm>
#include <cassert>
#include <cstdint>

namespace wipeproof {
namespace gpu {

void LabelLayout::AddRuns(const std::vector<LayoutRun>& runs) {
  for (const LayoutRun& r : runs) {
    assert(r.chunk_begin * m_ >= first_ && r.chunk_end * m_ <= first_ + count_ && r.chunks_per_team > 0);
    assert(runs_.empty() || runs_.back().chunk_end <= r.chunk_begin);
    runs_.push_back(r);
  }
}

LabelLayout::LabelLayout(uint64_t first, uint64_t count, uint32_t m)
    : first_(first), count_(count), m_(m), m_shift_(-1) {
  if (m > 0 && (m & (m - 1)) == 0) {
    m_shift_ = 0;
    while ((uint32_t{1} << m_shift_) != m) ++m_shift_;
  }
}

void LabelLayout::Locate(uint64_t g, Half halves[2]) const {
  // Every lookup's host side calls this once a label: m is a power of two in practice (a shift),
  // and a chunk's offset in its run fits 32 bits (a far cheaper division than 64 bits).
  const uint64_t chunk = m_shift_ >= 0 ? g >> m_shift_ : g / m_;
  const uint64_t rank = g - chunk * m_;
  // The last run starting at or before the chunk: counted without branches over a few runs (a
  // random index mispredicts every branch of a binary search), searched over many.
  size_t after = 0;
  if (runs_.size() <= 32) {
    for (const LayoutRun& r : runs_) after += r.chunk_begin <= chunk;
  } else {
    after = static_cast<size_t>(std::upper_bound(runs_.begin(), runs_.end(), chunk,
                                                 [](uint64_t c, const LayoutRun& r) { return c < r.chunk_begin; }) -
                                runs_.begin());
  }
  if (after > 0 && chunk < runs_[after - 1].chunk_end) {
    const LayoutRun& r = runs_[after - 1];
    const uint64_t offset = chunk - r.chunk_begin;
    const uint64_t team_offset =
        offset <= UINT32_MAX ? static_cast<uint32_t>(offset) / r.chunks_per_team : offset / r.chunks_per_team;
    const uint64_t team_first = r.chunk_begin + team_offset * r.chunks_per_team;
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

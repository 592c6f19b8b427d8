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

void LabelLayout::SetPlaces(LabelPlaces* p) const {
  p->first = first_;
  p->count = count_;
  p->m = m_;
  p->m_shift = m_shift_;
  p->runs = runs_.data();
  p->run_count = static_cast<uint32_t>(runs_.size());
}

void LabelLayout::Locate(uint64_t g, Half halves[2]) const {
  LabelPlaces p;
  SetPlaces(&p);
  uint64_t slot[2];
  uint32_t byte_offset[2];
  LocateHalves(p, g, slot, byte_offset);
  halves[0] = {slot[0], byte_offset[0]};
  halves[1] = {slot[1], byte_offset[1]};
}

}  // namespace gpu
}  // namespace wipeproof

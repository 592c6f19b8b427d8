// Where each label of a filled region lives. label-spec.md fixes the labels' values, not their
// addresses (§2: the prover's memory is its own to arrange; only lookups must answer), so a fill
// may put them where the kernel writes fastest:
//  - whole chunks labelled in place (fill_passes.h runs) sit in their team's *block*: the C * m
//    region slots from the team's first chunk on, label (rank r, chunk c) as two 16-byte halves
//    at 16-byte units (r * 2 + h) * C + c of the block (team_executor.h), so a warp's accesses
//    are contiguous;
//  - every other label (partial chunks, scratch teams, GPU-filled host memory) sits whole at
//    region slot g - first (the natural layout).
// Lookup turns a global index into the two halves' places with this layout's tables, on the host
// or in the lookup kernel (kernels/gpu/label_places.h holds the arithmetic both run).
//
// Thread-safety: immutable after construction and AddRun; const methods are thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "prover/backends/gpu/fill_passes.h"

namespace wipeproof {
namespace gpu {

class LabelLayout {
 public:
  LabelLayout() = default;
  LabelLayout(uint64_t first, uint64_t count, uint32_t m);

  // REQUIRES: runs in increasing chunk order, not overlapping, of whole chunks of the region.
  void AddRuns(const std::vector<LayoutRun>& runs);

  // A 16-byte half of a label: its region slot and byte offset in that slot (0 or 16).
  struct Half {
    uint64_t slot = 0;
    uint32_t byte_offset = 0;
  };
  // REQUIRES: first <= g < first + count. (kernels/gpu/label_places.h LocateHalves.)
  void Locate(uint64_t g, Half halves[2]) const;
  // Sets the layout's part of `p` (first, m, runs), pointing into this object: valid until it
  // changes or goes.
  void SetPlaces(LabelPlaces* p) const;

  uint64_t first() const { return first_; }
  uint64_t count() const { return count_; }
  const std::vector<LayoutRun>& runs() const { return runs_; }

 private:
  uint64_t first_ = 0, count_ = 0;
  uint32_t m_ = 1;
  int m_shift_ = 0;  // log2(m) when m is a power of two, else -1
  std::vector<LayoutRun> runs_;
};

}  // namespace gpu
}  // namespace wipeproof

#include "prover/backends/gpu/memory_acquisition.h"

#include <algorithm>
#include <cassert>

namespace wipeproof {
namespace gpu {
namespace {

uint64_t RoundDown(uint64_t v, uint64_t granularity) { return granularity ? v / granularity * granularity : v; }

}  // namespace

StatusOr<std::vector<DeviceAllocation>> AcquireInPieces(DeviceAllocator& allocator, uint64_t target_bytes,
                                                        const AcquisitionPolicy& policy) {
  std::vector<DeviceAllocation> pieces;
  uint64_t remaining = target_bytes;
  uint64_t piece = std::max<uint64_t>(policy.max_piece_bytes, 1);
  while (remaining > 0) {
    const uint64_t size = std::min(piece, remaining);
    void* ptr = nullptr;
    Status st = allocator.Allocate(size, &ptr);
    if (st.ok()) {
      pieces.push_back({ptr, size});
      remaining -= size;
      continue;
    }
    if (st.code() != StatusCode::kResourceExhausted) {
      ReleasePieces(allocator, &pieces);
      return st;
    }
    // Back off: halve (on the granularity), but not below the minimum piece.
    if (size <= policy.min_piece_bytes) break;
    piece = std::max(RoundDown(size / 2, policy.granularity_bytes), policy.min_piece_bytes);
  }
  return pieces;
}

void ReleasePieces(DeviceAllocator& allocator, std::vector<DeviceAllocation>* pieces) {
  // Newest first, the reverse of acquisition.
  for (auto it = pieces->rbegin(); it != pieces->rend(); ++it) allocator.Free(it->ptr);
  pieces->clear();
}

uint64_t TotalBytes(const std::vector<DeviceAllocation>& pieces) {
  uint64_t total = 0;
  for (const auto& p : pieces) total += p.bytes;
  return total;
}

SlotMap::SlotMap(const std::vector<DeviceAllocation>& pieces) {
  slot_begin_.push_back(0);
  uint64_t smallest = 0;
  for (const auto& p : pieces) {
    // A piece too small for one slot gets an empty range; both searches skip it.
    bases_.push_back(reinterpret_cast<uint64_t>(p.ptr));
    slot_begin_.push_back(slot_begin_.back() + p.bytes / 32);
    if (p.bytes / 32 > 0 && (smallest == 0 || p.bytes / 32 < smallest)) smallest = p.bytes / 32;
  }
  if (slots() == 0) return;
  // Buckets no wider than the smallest non-empty piece, so that Locate's scan from a bucket's first
  // piece passes at most one piece boundary (besides pieces of no slot); at most kMaxBuckets of
  // them (past that a bucket may span many small pieces: still right, only slower).
  bucket_shift_ = 0;
  while (bucket_shift_ < 63 && (uint64_t{2} << bucket_shift_) <= smallest) ++bucket_shift_;
  while (((slots() - 1) >> bucket_shift_) + 1 > kMaxBuckets) ++bucket_shift_;
  const uint64_t buckets = ((slots() - 1) >> bucket_shift_) + 1;
  bucket_piece_.resize(buckets);
  uint32_t piece = 0;
  for (uint64_t b = 0; b < buckets; ++b) {
    while (slot_begin_[piece + 1] <= (b << bucket_shift_)) ++piece;
    bucket_piece_[b] = piece;
  }
}

void SlotMap::SetPlaces(LabelPlaces* p) const {
  p->slot_begin = slot_begin_.data();
  p->bases = bases_.data();
  p->bucket_piece = bucket_piece_.data();
  p->bucket_shift = bucket_shift_;
}

SlotMap::Place SlotMap::Locate(uint64_t slot) const {
  assert(slot < slots());
  LabelPlaces p;
  SetPlaces(&p);
  const uint32_t piece = LocatePiece(p, slot);
  return {piece, (slot - slot_begin_[piece]) * 32};
}

}  // namespace gpu
}  // namespace wipeproof

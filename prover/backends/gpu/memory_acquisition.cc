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
  for (const auto& p : pieces) {
    // A piece too small for one slot gets an empty range; both searches skip it.
    bases_.push_back(reinterpret_cast<uint64_t>(p.ptr));
    slot_begin_.push_back(slot_begin_.back() + p.bytes / 32);
  }
}

SlotMap::Place SlotMap::Locate(uint64_t slot) const {
  assert(slot < slots());
  auto it = std::upper_bound(slot_begin_.begin(), slot_begin_.end(), slot);
  const uint32_t piece = static_cast<uint32_t>(it - slot_begin_.begin()) - 1;
  return {piece, (slot - slot_begin_[piece]) * 32};
}

}  // namespace gpu
}  // namespace wipeproof

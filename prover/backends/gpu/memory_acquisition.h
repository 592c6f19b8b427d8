// Taking (nearly) all of a GPU's memory, and mapping label slots onto what was taken.
//
// The free memory a runtime reports is often more than any single allocation that succeeds
// (fragmentation, the runtime's own lazy allocations), and one huge allocation can fail where
// many large ones succeed. AcquireInPieces therefore takes the target in pieces of at most
// max_piece_bytes and halves the piece size whenever an allocation does not fit, down to
// min_piece_bytes; it never uses managed (migratable) memory, which would not prove residency.
// SlotMap then numbers the 32-byte label slots of the pieces in order, so region slot s (global
// index - region first) has one place: (piece, byte offset).
//
// Thread-safety: AcquireInPieces is thread-compatible; SlotMap is immutable after construction.
#pragma once

#include <cstdint>
#include <vector>

#include "common/numbers.h"
#include "common/status.h"
#include "kernels/gpu/label_places.h"

namespace wipeproof {
namespace gpu {

struct DeviceAllocation {
  void* ptr = nullptr;  // device address
  uint64_t bytes = 0;
};

// What acquisition needs from a runtime; tests substitute a fake.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // Errors: RESOURCE_EXHAUSTED when the allocation does not fit (acquisition backs off);
  // anything else aborts the acquisition.
  virtual Status Allocate(uint64_t bytes, void** ptr) = 0;
  virtual void Free(void* ptr) = 0;
};

struct AcquisitionPolicy {
  uint64_t max_piece_bytes = 2 * kGiB;    // first try; large pieces keep the slot table short
  uint64_t min_piece_bytes = 32 * kMiB;   // give up below this (the rest is left as reserve)
  uint64_t granularity_bytes = 2 * kMiB;  // piece sizes are multiples, except a final remainder
};

// Takes up to `target_bytes` in pieces (see the file comment). Returns the pieces in allocation
// order; their sum may be less than the target when memory ran out (the caller decides whether
// that is enough). Errors: the allocator's first error other than RESOURCE_EXHAUSTED, after
// freeing every piece taken so far.
StatusOr<std::vector<DeviceAllocation>> AcquireInPieces(DeviceAllocator& allocator, uint64_t target_bytes,
                                                        const AcquisitionPolicy& policy = {});

// Frees every piece and clears the list.
void ReleasePieces(DeviceAllocator& allocator, std::vector<DeviceAllocation>* pieces);

uint64_t TotalBytes(const std::vector<DeviceAllocation>& pieces);

// Label slots over a list of pieces: piece i holds floor(bytes_i / 32) slots, numbered after
// those of pieces 0..i-1.
class SlotMap {
 public:
  SlotMap() = default;
  explicit SlotMap(const std::vector<DeviceAllocation>& pieces);

  struct Place {
    uint32_t piece = 0;
    uint64_t offset_bytes = 0;
  };

  uint64_t slots() const { return slot_begin_.empty() ? 0 : slot_begin_.back(); }
  uint32_t pieces() const { return static_cast<uint32_t>(bases_.size()); }
  // REQUIRES: slot < slots(). Constant time for pieces of similar sizes (a bucket table, then a
  // scan of the pieces one bucket spans; kernels/gpu/label_places.h LocatePiece, which the lookup
  // kernel runs twice a label, or the host when it places the halves).
  Place Locate(uint64_t slot) const;
  // Sets the slot map's part of `p` (slot_begin, bases, buckets), pointing into this object: valid
  // until it changes or goes.
  void SetPlaces(LabelPlaces* p) const;
  const std::vector<uint32_t>& bucket_piece() const { return bucket_piece_; }
  // slot_begin()[i] is piece i's first slot; pieces() + 1 entries (the last is slots()).
  const std::vector<uint64_t>& slot_begin() const { return slot_begin_; }
  // Device addresses of the pieces, as integers (kernel_args.h SlotTableView::base).
  const std::vector<uint64_t>& bases() const { return bases_; }

 private:
  static constexpr uint64_t kMaxBuckets = uint64_t{1} << 16;
  std::vector<uint64_t> slot_begin_;
  std::vector<uint64_t> bases_;
  // bucket_piece_[b]: the piece holding slot b << bucket_shift_.
  std::vector<uint32_t> bucket_piece_;
  int bucket_shift_ = 0;
};

}  // namespace gpu
}  // namespace wipeproof

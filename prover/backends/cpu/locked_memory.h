// A block of host memory that is mapped anonymous and private and locked resident with mlock, so
// neither swap nor lazy allocation can stand in for it: every page is backed by RAM from the
// moment Map() returns until Release(). Also excluded from core dumps and from fork()ed children.
// Cost: mlock faults in and zeroes every page on the calling thread (~0.2-0.4 s per GiB measured
// on the 2-core reference VM).
//
// Thread-safety: thread-compatible; Release() must not race with users of data().
#pragma once

#include <cstdint>

#include "common/status.h"

namespace wipeproof {

class LockedMemory {
 public:
  // Maps and locks `bytes`. REQUIRES: bytes > 0 and a multiple of the page size.
  // Errors: RESOURCE_EXHAUSTED when mmap or mlock fails (the message names errno and, for mlock,
  // RLIMIT_MEMLOCK in bytes and how to raise it). On error nothing stays mapped.
  static StatusOr<LockedMemory> Map(uint64_t bytes);

  LockedMemory() = default;
  LockedMemory(LockedMemory&& other) noexcept;
  LockedMemory& operator=(LockedMemory&& other) noexcept;
  LockedMemory(const LockedMemory&) = delete;
  LockedMemory& operator=(const LockedMemory&) = delete;
  ~LockedMemory() { Release(); }

  uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }  // bytes; 0 once released

  // munlock + munmap; idempotent.
  void Release();

 private:
  uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

// The system page size in bytes.
uint64_t PageBytes();

}  // namespace wipeproof

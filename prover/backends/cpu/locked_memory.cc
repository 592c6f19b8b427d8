#include "prover/backends/cpu/locked_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "prover/backends/cpu/host_memlock.h"

namespace wipeproof {

uint64_t PageBytes() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

StatusOr<LockedMemory> LockedMemory::Map(uint64_t bytes) {
  if (bytes == 0 || bytes % PageBytes() != 0) {
    return InvalidArgumentError("locked memory size must be a positive multiple of the page size, got " +
                                std::to_string(bytes));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return ResourceExhaustedError("mmap of " + std::to_string(bytes) + " bytes failed: " + std::strerror(errno));
  }
  // Advice only, failures change nothing: keep the labels out of core dumps and out of children.
  // No MADV_HUGEPAGE: with the common THP defrag=madvise it makes every fault compact memory
  // synchronously, which measured 2-3x slower to lock here, and lookups gain little from it.
  madvise(p, bytes, MADV_DONTDUMP);
  madvise(p, bytes, MADV_DONTFORK);
  // mlock faults every page in (zero-filled) and pins it.
  if (mlock(p, bytes) != 0) {
    int err = errno;
    munmap(p, bytes);
    MemlockLimit limit = ReadMemlockLimit();
    std::string limit_text = limit.unlimited ? "unlimited" : std::to_string(limit.limit_bytes) + " bytes";
    return ResourceExhaustedError("mlock of " + std::to_string(bytes) + " bytes failed: " + std::strerror(err) +
                                  " (RLIMIT_MEMLOCK is " + limit_text +
                                  "; raise it with `ulimit -l unlimited` or LimitMEMLOCK=infinity, "
                                  "or free host memory)");
  }
  LockedMemory m;
  m.data_ = static_cast<uint8_t*>(p);
  m.size_ = bytes;
  return m;
}

LockedMemory::LockedMemory(LockedMemory&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

LockedMemory& LockedMemory::operator=(LockedMemory&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void LockedMemory::Release() {
  if (data_ == nullptr) return;
  munlock(data_, size_);
  munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace wipeproof

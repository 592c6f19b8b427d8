// Secret bytes the challenger holds until a session ends: the expected labels (whoever reads them
// can answer every round without holding a single label). They get an anonymous mapping of their
// own, apart from the heap, which is
//   - locked resident (mlock), so they never reach swap. Failing to lock (RLIMIT_MEMLOCK too low
//     and no CAP_IPC_LOCK) is a warning, logged once per process, not an error: the bytes stay
//     usable, only swappable (locked() says which);
//   - excluded from core dumps (madvise MADV_DONTDUMP; the units also set LimitCORE=0);
//   - zeroed (sodium_memzero) before they are unlocked and unmapped, by Release() or the destructor.
// A zero-byte buffer maps nothing.
//
// Thread-safety: thread-compatible; Release() must not race with users of data().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "common/status.h"

namespace wipeproof {

class SecretBuffer {
 public:
  // Tests only: called by Release() with the bytes after they were zeroed, before they are unmapped.
  using BeforeUnmap = std::function<void(const uint8_t* data, size_t size)>;

  // `bytes` zeroed bytes. Errors: RESOURCE_EXHAUSTED when the mapping fails (naming errno).
  static StatusOr<SecretBuffer> Allocate(size_t bytes, BeforeUnmap before_unmap = {});

  SecretBuffer() = default;
  SecretBuffer(SecretBuffer&& other) noexcept;
  SecretBuffer& operator=(SecretBuffer&& other) noexcept;
  SecretBuffer(const SecretBuffer&) = delete;
  SecretBuffer& operator=(const SecretBuffer&) = delete;
  ~SecretBuffer() { Release(); }

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }  // bytes; 0 once released
  bool locked() const { return locked_; }

  // Zeroes, unlocks and unmaps; idempotent.
  void Release();

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // size_ rounded up to whole pages
  bool locked_ = false;
  BeforeUnmap before_unmap_;
};

}  // namespace wipeproof

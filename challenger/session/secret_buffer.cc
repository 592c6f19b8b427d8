#include "challenger/session/secret_buffer.h"

#include <glog/logging.h>
#include <sodium.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

namespace wipeproof {

namespace {

// The first failure to lock, in words, once per process (every later one fails alike).
void WarnNotLocked(size_t bytes, int err) {
  static std::atomic<bool> warned{false};
  if (warned.exchange(true)) return;
  struct rlimit limit {};
  std::string limit_text = "unknown";
  if (getrlimit(RLIMIT_MEMLOCK, &limit) == 0) {
    limit_text = limit.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(limit.rlim_cur) + " bytes";
  }
  LOG(WARNING) << "expected labels not locked in memory (mlock of " << bytes << " bytes: " << std::strerror(err)
               << "; RLIMIT_MEMLOCK is " << limit_text
               << "): they may be written to swap; raise LimitMEMLOCK (docs/deploy.md \"Hardening\")";
}

}  // namespace

StatusOr<SecretBuffer> SecretBuffer::Allocate(size_t bytes, BeforeUnmap before_unmap) {
  SecretBuffer b;
  b.before_unmap_ = std::move(before_unmap);
  if (bytes == 0) return b;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = (bytes + page - 1) / page * page;
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return ResourceExhaustedError("mapping " + std::to_string(bytes) +
                                  " bytes for expected labels failed: " + std::strerror(errno));
  }
  // Advice: a kernel without MADV_DONTDUMP changes nothing else (and LimitCORE=0 still holds).
  madvise(p, mapped, MADV_DONTDUMP);
  b.locked_ = mlock(p, mapped) == 0;
  if (!b.locked_) WarnNotLocked(mapped, errno);
  b.data_ = static_cast<uint8_t*>(p);
  b.size_ = bytes;
  b.mapped_ = mapped;
  return b;
}

SecretBuffer::SecretBuffer(SecretBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapped_(std::exchange(other.mapped_, 0)),
      locked_(std::exchange(other.locked_, false)),
      before_unmap_(std::move(other.before_unmap_)) {}

SecretBuffer& SecretBuffer::operator=(SecretBuffer&& other) noexcept {
  if (this != &other) {
    Release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapped_ = std::exchange(other.mapped_, 0);
    locked_ = std::exchange(other.locked_, false);
    before_unmap_ = std::move(other.before_unmap_);
  }
  return *this;
}

void SecretBuffer::Release() {
  if (data_ == nullptr) return;
  sodium_memzero(data_, mapped_);
  if (before_unmap_) before_unmap_(data_, size_);
  if (locked_) munlock(data_, mapped_);
  munmap(data_, mapped_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = 0;
  locked_ = false;
}

}  // namespace wipeproof

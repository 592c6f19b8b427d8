#include "prover/agent/prefixed_stream.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace wipeproof {

PrefixedStream::PrefixedStream(kj::Own<kj::AsyncIoStream> inner, kj::Array<kj::byte> prefix)
    : ForwardingStream(kj::mv(inner)), prefix_(kj::mv(prefix)) {}

kj::Promise<size_t> PrefixedStream::tryRead(void* buffer, size_t min_bytes, size_t max_bytes) {
  if (served_ == prefix_.size() || max_bytes == 0) return inner_->tryRead(buffer, min_bytes, max_bytes);
  const size_t n = std::min(max_bytes, prefix_.size() - served_);
  std::memcpy(buffer, prefix_.begin() + served_, n);
  served_ += n;
  if (n >= min_bytes) return n;
  // The rest of what the caller needs comes from the inner stream (fewer only at its end).
  return inner_->tryRead(static_cast<kj::byte*>(buffer) + n, min_bytes - n, max_bytes - n).then([n](size_t more) {
    return n + more;
  });
}

}  // namespace wipeproof

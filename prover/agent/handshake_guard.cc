#include "prover/agent/handshake_guard.h"

#include <kj/debug.h>

#include <algorithm>
#include <utility>

namespace wipeproof {

HandshakeGuardStream::HandshakeGuardStream(kj::Own<kj::AsyncIoStream> inner, size_t budget, Pace pace,
                                           uint64_t* bytes_read)
    : ForwardingStream(kj::mv(inner)), remaining_(budget), budget_(budget), pace_(kj::mv(pace)), bytes_read_(bytes_read) {}

kj::Promise<size_t> HandshakeGuardStream::tryRead(void* buffer, size_t min_bytes, size_t max_bytes) {
  if (authenticated_) return inner_->tryRead(buffer, min_bytes, max_bytes);
  if (remaining_ == 0) {
    return KJ_EXCEPTION(FAILED, "the peer sent more than the handshake allows before authenticating", budget_);
  }
  max_bytes = std::min(max_bytes, remaining_);
  min_bytes = std::min(min_bytes, max_bytes);
  return inner_->tryRead(buffer, min_bytes, max_bytes).then([this](size_t n) -> kj::Promise<size_t> {
    remaining_ -= n;
    *bytes_read_ += n;
    if (n == 0 || authenticated_) return n;
    return pace_().then([n]() { return n; });
  });
}

}  // namespace wipeproof

// A stream that passes everything but its reads straight to the stream it wraps: the base of the
// agent's read-side wrappers (handshake_guard.h bounds an unauthenticated peer's reads,
// prefixed_stream.h gives back bytes already read). A subclass defines tryRead and reads `inner_`.
//
// Thread-safety: the event loop thread of `inner`.
#pragma once

#include <kj/async-io.h>

#include <utility>

namespace wipeproof {

class ForwardingStream : public kj::AsyncIoStream {
 public:
  explicit ForwardingStream(kj::Own<kj::AsyncIoStream> inner) : inner_(kj::mv(inner)) {}

  kj::Promise<void> write(const void* buffer, size_t size) override { return inner_->write(buffer, size); }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    return inner_->write(pieces);
  }
  kj::Promise<void> whenWriteDisconnected() override { return inner_->whenWriteDisconnected(); }
  void shutdownWrite() override { inner_->shutdownWrite(); }
  void abortRead() override { inner_->abortRead(); }
  void getsockopt(int level, int option, void* value, kj::uint* length) override {
    inner_->getsockopt(level, option, value, length);
  }
  void setsockopt(int level, int option, const void* value, kj::uint length) override {
    inner_->setsockopt(level, option, value, length);
  }
  void getsockname(struct sockaddr* addr, kj::uint* length) override { inner_->getsockname(addr, length); }
  void getpeername(struct sockaddr* addr, kj::uint* length) override { inner_->getpeername(addr, length); }

 protected:
  kj::Own<kj::AsyncIoStream> inner_;
};

}  // namespace wipeproof

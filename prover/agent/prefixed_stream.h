// A stream whose first bytes were already read (agent_rpc_server.h reads a connection's first 8
// bytes to tell a round channel from an RPC connection): reads return those bytes first, then the
// inner stream's; everything else goes straight to the inner stream.
//
// Units: bytes. Thread-safety: the event loop thread of `inner`.
#pragma once

#include <kj/array.h>
#include <kj/async-io.h>

#include <cstddef>

namespace wipeproof {

class PrefixedStream final : public kj::AsyncIoStream {
 public:
  PrefixedStream(kj::Own<kj::AsyncIoStream> inner, kj::Array<kj::byte> prefix);

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;
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

 private:
  kj::Own<kj::AsyncIoStream> inner_;
  kj::Array<kj::byte> prefix_;
  size_t served_ = 0;  // bytes of prefix_ already returned
};

}  // namespace wipeproof

// The raw byte stream under an incoming TLS handshake (agent_rpc_server.h): until the handshake has
// authenticated the peer (Authenticated()), it
//   - reads at most `budget` bytes from the peer in all, then fails every further read (the
//     handshake fails and the connection is closed): an unauthenticated peer can make the agent
//     hold at most `budget` bytes (plus the TLS layer's one 8 KiB read buffer), never a
//     Cap'n Proto frame (no frame is read before the handshake completes);
//   - hands the bytes of each read over only once `pace()` resolves: OpenSSL does a handshake
//     step's work (key exchange, signature, certificate check) right after the bytes it waited for
//     arrive, so pacing the reads paces that work on the shared event loop.
// After Authenticated() it is the plain stream (TLS records of the authenticated connection).
// Writes and socket options always go straight through.
//
// Units: bytes. Thread-safety: the event loop thread of `inner`.
#pragma once

#include <kj/async-io.h>
#include <kj/function.h>

#include <cstddef>
#include <cstdint>

namespace wipeproof {

class HandshakeGuardStream final : public kj::AsyncIoStream {
 public:
  using Pace = kj::Function<kj::Promise<void>()>;

  // Counts the bytes read before Authenticated() into *bytes_read. REQUIRES: `pace` may be called,
  // and *bytes_read written, until the stream is destroyed or Authenticated().
  HandshakeGuardStream(kj::Own<kj::AsyncIoStream> inner, size_t budget, Pace pace, uint64_t* bytes_read);

  // The peer is authenticated: reads are no longer limited, counted or paced.
  void Authenticated() { authenticated_ = true; }

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
  size_t remaining_;
  const size_t budget_;
  Pace pace_;
  uint64_t* const bytes_read_;
  bool authenticated_ = false;
};

}  // namespace wipeproof

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

#include "prover/agent/forwarding_stream.h"

namespace wipeproof {

class HandshakeGuardStream final : public ForwardingStream {
 public:
  using Pace = kj::Function<kj::Promise<void>()>;

  // Counts the bytes read before Authenticated() into *bytes_read. REQUIRES: `pace` may be called,
  // and *bytes_read written, until the stream is destroyed or Authenticated().
  HandshakeGuardStream(kj::Own<kj::AsyncIoStream> inner, size_t budget, Pace pace, uint64_t* bytes_read);

  // The peer is authenticated: reads are no longer limited, counted or paced.
  void Authenticated() { authenticated_ = true; }

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;

 private:
  size_t remaining_;
  const size_t budget_;
  Pace pace_;
  uint64_t* const bytes_read_;
  bool authenticated_ = false;
};

}  // namespace wipeproof

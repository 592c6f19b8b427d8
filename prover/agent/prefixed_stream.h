// A stream whose first bytes were already read (agent_rpc_server.h reads a connection's first 8
// bytes to tell a round channel from an RPC connection): reads return those bytes first, then the
// inner stream's; everything else goes straight to the inner stream.
//
// Units: bytes. Thread-safety: the event loop thread of `inner`.
#pragma once

#include <kj/array.h>
#include <kj/async-io.h>

#include <cstddef>

#include "prover/agent/forwarding_stream.h"

namespace wipeproof {

class PrefixedStream final : public ForwardingStream {
 public:
  PrefixedStream(kj::Own<kj::AsyncIoStream> inner, kj::Array<kj::byte> prefix);

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;

 private:
  kj::Array<kj::byte> prefix_;
  size_t served_ = 0;  // bytes of prefix_ already returned
};

}  // namespace wipeproof

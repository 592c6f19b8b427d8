// Ed25519 key pairs from a seed of 32 equal bytes: fixed, public, and therefore for the selftest
// and the tests only (never for a real node or authority). The tests' roles: authority 0x11,
// challenger 0x22, node 0x33, another node 0x44.
// Thread-safety: pure function.
#pragma once

#include <array>
#include <cstdint>

#include "proto/crypto.h"

namespace wipeproof::adversary {

inline proto::KeyPair FixedKey(uint8_t fill) {
  std::array<uint8_t, proto::kKeySeedBytes> seed;
  seed.fill(fill);
  return proto::KeyPairFromSeed(seed);
}

}  // namespace wipeproof::adversary

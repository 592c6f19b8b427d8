// Node hashes of label-spec.md §4 (c1) and §5 (192), header-only for host and device. Labels are
// handled as 8 little-endian words; an absent predecessor is 8 zero words.
#pragma once

#include <cstdint>

#include "kernels/blake3_compress.h"
#include "kernels/host_device.h"

namespace wipeproof {

// §4 flags: CHUNK_START | CHUNK_END | ROOT | KEYED_HASH.
constexpr uint32_t kC1NodeFlags = kChunkStart | kChunkEnd | kRoot | kKeyedHash;
// §5: the 192-byte message is one BLAKE3 chunk of three blocks under keyed mode.
constexpr uint32_t k192Block0Flags = kKeyedHash | kChunkStart;
constexpr uint32_t k192Block1Flags = kKeyedHash;
constexpr uint32_t k192Block2Flags = kKeyedHash | kChunkEnd | kRoot;

// §4: label(node) = first 32 bytes of compress(chunk_key, pred0 || pred1, node, 64, flags).
WP_HOST_DEVICE void NodeHashC1(const uint32_t key[8], uint64_t node, const uint32_t pred0[8],
                               const uint32_t pred1[8], uint32_t out[8]) {
  uint32_t block[16];
  for (int i = 0; i < 8; ++i) {
    block[i] = pred0[i];
    block[i + 8] = pred1[i];
  }
  Blake3CompressCv(key, block, node, kBlake3BlockBytes, kC1NodeFlags, out);
}

// §5 block 0 = be64(node) || 56 zero bytes, compressed under the source or internal context key.
// Depends only on the node number and its kind, never on the seed: implementations may cache it.
WP_HOST_DEVICE void Block0ChainingValue192(const uint32_t key[8], uint64_t node, uint32_t cv0[8]) {
  uint32_t block[16] = {ByteSwap32(static_cast<uint32_t>(node >> 32)), ByteSwap32(static_cast<uint32_t>(node))};
  Blake3CompressCv(key, block, 0, kBlake3BlockBytes, k192Block0Flags, cv0);
}

// §5 blocks 1 and 2, given block 0's chaining value.
WP_HOST_DEVICE void NodeHash192FromCv0(const uint32_t cv0[8], const uint32_t pred0[8], const uint32_t pred1[8],
                                       const uint32_t block2[16], uint32_t out[8]) {
  uint32_t block[16];
  for (int i = 0; i < 8; ++i) {
    block[i] = pred0[i];
    block[i + 8] = pred1[i];
  }
  uint32_t cv1[8];
  Blake3CompressCv(cv0, block, 0, kBlake3BlockBytes, k192Block1Flags, cv1);
  Blake3CompressCv(cv1, block2, 0, kBlake3BlockBytes, k192Block2Flags, out);
}

}  // namespace wipeproof

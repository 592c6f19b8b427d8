// BLAKE3 compression function, portable and header-only (host, CUDA, HIP).
// Source: the BLAKE3 specification (O'Connor, Aumasson, Neves, Wilcox-O'Hearn, 2020), section 2.2,
// and its reference implementation (reference_impl.rs). Words are little-endian 32-bit.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace wipeproof {

constexpr int kBlake3KeyBytes = 32;
constexpr int kBlake3OutBytes = 32;
constexpr int kBlake3BlockBytes = 64;
constexpr int kBlake3ChunkBytes = 1024;

// Domain flags (specification table 3).
enum Blake3Flag : uint32_t {
  kChunkStart = 1,
  kChunkEnd = 2,
  kParent = 4,
  kRoot = 8,
  kKeyedHash = 16,
  kDeriveKeyContext = 32,
  kDeriveKeyMaterial = 64,
};

// The IV (SHA-256's), as a function so device code needs no global table.
WP_HOST_DEVICE uint32_t Blake3IvWord(int i) {
  constexpr uint32_t kIv[8] = {0x6A09E667u, 0xBB67AE85u, 0x3C6EF372u, 0xA54FF53Au,
                               0x510E527Fu, 0x9B05688Cu, 0x1F83D9ABu, 0x5BE0CD19u};
  return kIv[i];
}

WP_HOST_DEVICE uint32_t Blake3Rotr(uint32_t w, int c) { return (w >> c) | (w << (32 - c)); }

WP_HOST_DEVICE void Blake3G(uint32_t* s, int a, int b, int c, int d, uint32_t mx, uint32_t my) {
  s[a] = s[a] + s[b] + mx;
  s[d] = Blake3Rotr(s[d] ^ s[a], 16);
  s[c] = s[c] + s[d];
  s[b] = Blake3Rotr(s[b] ^ s[c], 12);
  s[a] = s[a] + s[b] + my;
  s[d] = Blake3Rotr(s[d] ^ s[a], 8);
  s[c] = s[c] + s[d];
  s[b] = Blake3Rotr(s[b] ^ s[c], 7);
}

// One round on state `s` with message words `m` (already permuted for this round).
WP_HOST_DEVICE void Blake3Round(uint32_t* s, const uint32_t* m) {
  Blake3G(s, 0, 4, 8, 12, m[0], m[1]);
  Blake3G(s, 1, 5, 9, 13, m[2], m[3]);
  Blake3G(s, 2, 6, 10, 14, m[4], m[5]);
  Blake3G(s, 3, 7, 11, 15, m[6], m[7]);
  Blake3G(s, 0, 5, 10, 15, m[8], m[9]);
  Blake3G(s, 1, 6, 11, 12, m[10], m[11]);
  Blake3G(s, 2, 7, 8, 13, m[12], m[13]);
  Blake3G(s, 3, 4, 9, 14, m[14], m[15]);
}

// Full compression: `out[16]` receives the 16 state words after the feed-forward
// (out[j] = s[j] ^ s[j+8], out[j+8] = s[j+8] ^ cv[j]), as in the reference implementation.
// `cv[8]` chaining value, `block[16]` message words, `counter` 64-bit (low word 12, high word 13).
WP_HOST_DEVICE void Blake3Compress(const uint32_t cv[8], const uint32_t block[16], uint64_t counter,
                                   uint32_t block_len, uint32_t flags, uint32_t out[16]) {
  uint32_t s[16] = {cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
                    Blake3IvWord(0), Blake3IvWord(1), Blake3IvWord(2), Blake3IvWord(3),
                    static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), block_len, flags};
  uint32_t m[16];
  for (int i = 0; i < 16; ++i) m[i] = block[i];
  // Message permutation (specification table 2), applied between rounds.
  constexpr int kPermutation[16] = {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8};
  for (int round = 0; round < 7; ++round) {
    Blake3Round(s, m);
    if (round == 6) break;
    uint32_t p[16];
    for (int i = 0; i < 16; ++i) p[i] = m[kPermutation[i]];
    for (int i = 0; i < 16; ++i) m[i] = p[i];
  }
  for (int j = 0; j < 8; ++j) {
    out[j] = s[j] ^ s[j + 8];
    out[j + 8] = s[j + 8] ^ cv[j];
  }
}

// Only the first 8 output words (the chaining value, or a 32-byte root output).
WP_HOST_DEVICE void Blake3CompressCv(const uint32_t cv[8], const uint32_t block[16], uint64_t counter,
                                     uint32_t block_len, uint32_t flags, uint32_t out[8]) {
  uint32_t full[16];
  Blake3Compress(cv, block, counter, block_len, flags, full);
  for (int j = 0; j < 8; ++j) out[j] = full[j];
}

WP_HOST_DEVICE uint32_t LoadLe32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

WP_HOST_DEVICE void StoreLe32(uint8_t* p, uint32_t w) {
  p[0] = static_cast<uint8_t>(w);
  p[1] = static_cast<uint8_t>(w >> 8);
  p[2] = static_cast<uint8_t>(w >> 16);
  p[3] = static_cast<uint8_t>(w >> 24);
}

WP_HOST_DEVICE uint32_t ByteSwap32(uint32_t w) {
  return (w >> 24) | ((w >> 8) & 0xff00u) | ((w << 8) & 0xff0000u) | (w << 24);
}

}  // namespace wipeproof

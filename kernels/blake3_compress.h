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

// Message word order of each of the 7 rounds: the permutation of specification table 2
// ({2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}) applied r times. With the round loop
// unrolled the indices are constants, so the message stays in registers.
#define WP_BLAKE3_SCHEDULE                                                                                     \
  {                                                                                                            \
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8}, \
        {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1}, {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6}, \
        {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4}, {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7}, \
        {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13}                                                  \
  }

#if defined(__CUDACC__) || defined(__HIPCC__)
#define WP_UNROLL_ALL _Pragma("unroll")
#elif defined(__clang__)
#define WP_UNROLL_ALL _Pragma("unroll")
#else
#define WP_UNROLL_ALL _Pragma("GCC unroll 16")
#endif

// Full compression: `out[16]` receives the 16 state words after the feed-forward
// (out[j] = s[j] ^ s[j+8], out[j+8] = s[j+8] ^ cv[j]), as in the reference implementation.
// `cv[8]` chaining value, `block[16]` message words, `counter` 64-bit (low word 12, high word 13).
// `out` may alias `cv` or `block`.
WP_HOST_DEVICE void Blake3Compress(const uint32_t cv[8], const uint32_t block[16], uint64_t counter,
                                   uint32_t block_len, uint32_t flags, uint32_t out[16]) {
  constexpr uint8_t kSchedule[7][16] = WP_BLAKE3_SCHEDULE;
  uint32_t m[16];
  WP_UNROLL_ALL
  for (int i = 0; i < 16; ++i) m[i] = block[i];
  uint32_t s[16] = {cv[0], cv[1], cv[2], cv[3], cv[4], cv[5], cv[6], cv[7],
                    Blake3IvWord(0), Blake3IvWord(1), Blake3IvWord(2), Blake3IvWord(3),
                    static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), block_len, flags};
  WP_UNROLL_ALL
  for (int r = 0; r < 7; ++r) {
    const uint8_t* k = kSchedule[r];
    Blake3G(s, 0, 4, 8, 12, m[k[0]], m[k[1]]);
    Blake3G(s, 1, 5, 9, 13, m[k[2]], m[k[3]]);
    Blake3G(s, 2, 6, 10, 14, m[k[4]], m[k[5]]);
    Blake3G(s, 3, 7, 11, 15, m[k[6]], m[k[7]]);
    Blake3G(s, 0, 5, 10, 15, m[k[8]], m[k[9]]);
    Blake3G(s, 1, 6, 11, 12, m[k[10]], m[k[11]]);
    Blake3G(s, 2, 7, 8, 13, m[k[12]], m[k[13]]);
    Blake3G(s, 3, 4, 9, 14, m[k[14]], m[k[15]]);
  }
  uint32_t cv_copy[8];
  WP_UNROLL_ALL
  for (int j = 0; j < 8; ++j) cv_copy[j] = cv[j];
  WP_UNROLL_ALL
  for (int j = 0; j < 8; ++j) {
    out[j] = s[j] ^ s[j + 8];
    out[j + 8] = s[j + 8] ^ cv_copy[j];
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

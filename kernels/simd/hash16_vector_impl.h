// 16-lane BLAKE3 node hashing written once with GCC/Clang vector extensions and compiled per ISA
// (hash16_avx2.cc with -mavx2, hash16_avx512.cc with -mavx512f). Everything here is in an anonymous
// namespace and calls no inline function of another header, so no ISA-specific copy of a shared
// inline function can leak into code that runs on a CPU without that ISA.
// Arithmetic: BLAKE3 specification §2.2, identical to kernels/blake3_compress.h.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"

namespace wipeproof {
namespace {

typedef uint32_t V __attribute__((vector_size(64)));  // 16 lanes of 32 bits

// BLAKE3 domain flags (same values as kernels/blake3_compress.h, which is not included here).
constexpr uint32_t kFlagChunkStart = 1, kFlagChunkEnd = 2, kFlagRoot = 8, kFlagKeyed = 16;

inline V Splat(uint32_t x) { return V{} + x; }
inline V Load(const uint32_t* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void Store(uint32_t* p, V v) { std::memcpy(p, &v, sizeof v); }
template <int C>
inline V Rotr(V x) {
  return (x >> C) | (x << (32 - C));
}

inline void G(V& a, V& b, V& c, V& d, V mx, V my) {
  a = a + b + mx;
  d = Rotr<16>(d ^ a);
  c = c + d;
  b = Rotr<12>(b ^ c);
  a = a + b + my;
  d = Rotr<8>(d ^ a);
  c = c + d;
  b = Rotr<7>(b ^ c);
}

// Message word order of each of the 7 rounds (the permutation of spec table 2 applied r times).
constexpr uint8_t kSchedule[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1}, {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4}, {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13}};

// First 8 output words (cv or 32-byte root output) of 16 compressions.
inline void Compress16(const V cv[8], const V m[16], V counter_lo, V counter_hi, uint32_t block_len, uint32_t flags,
                       V out[8]) {
  V s0 = cv[0], s1 = cv[1], s2 = cv[2], s3 = cv[3], s4 = cv[4], s5 = cv[5], s6 = cv[6], s7 = cv[7];
  V s8 = Splat(0x6A09E667u), s9 = Splat(0xBB67AE85u), s10 = Splat(0x3C6EF372u), s11 = Splat(0xA54FF53Au);
  V s12 = counter_lo, s13 = counter_hi, s14 = Splat(block_len), s15 = Splat(flags);
#pragma GCC unroll 7
  for (int r = 0; r < 7; ++r) {
    const uint8_t* k = kSchedule[r];
    G(s0, s4, s8, s12, m[k[0]], m[k[1]]);
    G(s1, s5, s9, s13, m[k[2]], m[k[3]]);
    G(s2, s6, s10, s14, m[k[4]], m[k[5]]);
    G(s3, s7, s11, s15, m[k[6]], m[k[7]]);
    G(s0, s5, s10, s15, m[k[8]], m[k[9]]);
    G(s1, s6, s11, s12, m[k[10]], m[k[11]]);
    G(s2, s7, s8, s13, m[k[12]], m[k[13]]);
    G(s3, s4, s9, s14, m[k[14]], m[k[15]]);
  }
  out[0] = s0 ^ s8;
  out[1] = s1 ^ s9;
  out[2] = s2 ^ s10;
  out[3] = s3 ^ s11;
  out[4] = s4 ^ s12;
  out[5] = s5 ^ s13;
  out[6] = s6 ^ s14;
  out[7] = s7 ^ s15;
}

inline uint32_t Bswap(uint32_t w) { return __builtin_bswap32(w); }

void Hash16Vector(const ChunkHashParams& params, const Cv0Table& cv0_table, const uint32_t* lo, const uint32_t* hi,
                  uint32_t pair_bit, uint64_t node_base, uint32_t* out) {
  V m[16];
  if (pair_bit != 0) {
    const V lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const V lower = lane & ~Splat(pair_bit), upper = lane | Splat(pair_bit);
    for (int w = 0; w < 8; ++w) {
      V v = Load(lo + w * kLanes);
      m[w] = __builtin_shuffle(v, lower);
      m[w + 8] = __builtin_shuffle(v, upper);
    }
  } else {
    for (int w = 0; w < 8; ++w) {
      m[w] = Load(lo + w * kLanes);
      m[w + 8] = hi ? Load(hi + w * kLanes) : V{};
    }
  }
  const V lane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  // Node numbers stay below 2^32 for every m <= 2^20 (4.03e8 nodes at most), but carry anyway.
  const V node_lo = Splat(static_cast<uint32_t>(node_base)) + lane;
  const V carry = (node_lo < Splat(static_cast<uint32_t>(node_base))) & Splat(1);
  const V node_hi = Splat(static_cast<uint32_t>(node_base >> 32)) + carry;
  V result[8];
  if (params.format == LabelFormat::kC1) {
    V key[8];
    for (int i = 0; i < 8; ++i) key[i] = Splat(params.key[i]);
    Compress16(key, m, node_lo, node_hi, 64, kFlagChunkStart | kFlagChunkEnd | kFlagRoot | kFlagKeyed, result);
  } else {
    V cv[8];
    if (node_base + kLanes <= cv0_table.nodes) {
      uint32_t t[8][kLanes];
      const uint32_t* rows = cv0_table.words + node_base * 8;
      for (int l = 0; l < kLanes; ++l)
        for (int w = 0; w < 8; ++w) t[w][l] = rows[l * 8 + w];
      for (int w = 0; w < 8; ++w) cv[w] = Load(t[w]);
    } else {
      V key[8], block0[16] = {};
      for (int i = 0; i < 8; ++i) key[i] = Splat(params.key[i]);
      for (int l = 0; l < kLanes; ++l) {  // be64(node) as two big-endian words
        block0[0][l] = Bswap(node_hi[l]);
        block0[1][l] = Bswap(node_lo[l]);
      }
      Compress16(key, block0, V{}, V{}, 64, kFlagKeyed | kFlagChunkStart, cv);
    }
    V cv1[8], block2[16];
    Compress16(cv, m, V{}, V{}, 64, kFlagKeyed, cv1);
    for (int i = 0; i < 16; ++i) block2[i] = Splat(params.block2[i]);
    Compress16(cv1, block2, V{}, V{}, 64, kFlagKeyed | kFlagChunkEnd | kFlagRoot, result);
  }
  for (int w = 0; w < 8; ++w) Store(out + w * kLanes, result[w]);
}

void HashAcrossVector(const ChunkBatchParams& params, const uint32_t cv0[8], const uint32_t* lo, const uint32_t* hi,
                      uint64_t node, uint32_t* out) {
  V m[16];
  for (int w = 0; w < 8; ++w) {
    m[w] = Load(lo + w * kLanes);
    m[w + 8] = hi ? Load(hi + w * kLanes) : V{};
  }
  const V node_lo = Splat(static_cast<uint32_t>(node)), node_hi = Splat(static_cast<uint32_t>(node >> 32));
  V result[8];
  if (params.format == LabelFormat::kC1) {
    V key[8];
    for (int i = 0; i < 8; ++i) key[i] = Load(params.key[i]);
    Compress16(key, m, node_lo, node_hi, 64, kFlagChunkStart | kFlagChunkEnd | kFlagRoot | kFlagKeyed, result);
  } else {
    V cv[8], cv1[8], block2[16];
    for (int i = 0; i < 8; ++i) cv[i] = Splat(cv0[i]);
    Compress16(cv, m, V{}, V{}, 64, kFlagKeyed, cv1);
    for (int i = 0; i < 16; ++i) block2[i] = Load(params.block2[i]);
    Compress16(cv1, block2, V{}, V{}, 64, kFlagKeyed | kFlagChunkEnd | kFlagRoot, result);
  }
  for (int w = 0; w < 8; ++w) Store(out + w * kLanes, result[w]);
}

}  // namespace
}  // namespace wipeproof

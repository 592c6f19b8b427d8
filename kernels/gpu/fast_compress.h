// BLAKE3 compression, unrolled at compile time for GPU kernels (and the host, for tests).
//
// Same function as kernels/blake3_compress.h (BLAKE3 specification §2.2), written so that every
// message-word index is a compile-time constant: the 7 rounds are template instances and the
// message permutation of round R is folded into MsgIndex<R, i>. Nothing then needs an indexed
// array, so device compilers keep the state and the block in registers (a runtime-indexed m[]
// would spill to local memory). Only the first 8 output words are produced (chaining value or
// 32-byte root output), which is all a node hash uses.
//
// tests/kernels/gpu_kernel_logic_test.cc checks it against Blake3Compress byte for byte.
#pragma once

#include <cstdint>

#include "kernels/blake3_compress.h"
#include "kernels/host_device.h"

namespace wipeproof {
namespace gpu {
namespace fast_compress_internal {

// Specification table 2: the message permutation applied between rounds.
constexpr int Permutation(int i) {
  return i == 0    ? 2
         : i == 1  ? 6
         : i == 2  ? 3
         : i == 3  ? 10
         : i == 4  ? 7
         : i == 5  ? 0
         : i == 6  ? 4
         : i == 7  ? 13
         : i == 8  ? 1
         : i == 9  ? 11
         : i == 10 ? 12
         : i == 11 ? 5
         : i == 12 ? 9
         : i == 13 ? 14
         : i == 14 ? 15
                   : 8;
}

// Word of the original block used at position I in round R: round R's message is
// m_R[i] = m_{R-1}[Permutation(i)].
template <int R, int I>
struct MsgIndex {
  static constexpr int value = MsgIndex<R - 1, Permutation(I)>::value;
};
template <int I>
struct MsgIndex<0, I> {
  static constexpr int value = I;
};

template <int N>
WP_HOST_DEVICE uint32_t Rotr(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __funnelshift_r(x, x, N);  // one SHF; the AMD compiler finds v_alignbit from the plain form
#else
  return (x >> N) | (x << (32 - N));
#endif
}

WP_HOST_DEVICE void G(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d, uint32_t x, uint32_t y) {
  a = a + b + x;
  d = Rotr<16>(d ^ a);
  c = c + d;
  b = Rotr<12>(b ^ c);
  a = a + b + y;
  d = Rotr<8>(d ^ a);
  c = c + d;
  b = Rotr<7>(b ^ c);
}

template <int R>
WP_HOST_DEVICE void Round(uint32_t* s, const uint32_t* m) {
  G(s[0], s[4], s[8], s[12], m[MsgIndex<R, 0>::value], m[MsgIndex<R, 1>::value]);
  G(s[1], s[5], s[9], s[13], m[MsgIndex<R, 2>::value], m[MsgIndex<R, 3>::value]);
  G(s[2], s[6], s[10], s[14], m[MsgIndex<R, 4>::value], m[MsgIndex<R, 5>::value]);
  G(s[3], s[7], s[11], s[15], m[MsgIndex<R, 6>::value], m[MsgIndex<R, 7>::value]);
  G(s[0], s[5], s[10], s[15], m[MsgIndex<R, 8>::value], m[MsgIndex<R, 9>::value]);
  G(s[1], s[6], s[11], s[12], m[MsgIndex<R, 10>::value], m[MsgIndex<R, 11>::value]);
  G(s[2], s[7], s[8], s[13], m[MsgIndex<R, 12>::value], m[MsgIndex<R, 13>::value]);
  G(s[3], s[4], s[9], s[14], m[MsgIndex<R, 14>::value], m[MsgIndex<R, 15>::value]);
}

}  // namespace fast_compress_internal

// out[j] = first 8 words of compress(cv, block, counter, block_len, flags), j = 0..7.
// `out` may alias `cv` (it is written after the last read).
WP_HOST_DEVICE void FastCompressCv(const uint32_t cv[8], const uint32_t block[16], uint64_t counter, uint32_t block_len,
                                   uint32_t flags, uint32_t out[8]) {
  using namespace fast_compress_internal;
  uint32_t s[16] = {cv[0],
                    cv[1],
                    cv[2],
                    cv[3],
                    cv[4],
                    cv[5],
                    cv[6],
                    cv[7],
                    0x6A09E667u,
                    0xBB67AE85u,
                    0x3C6EF372u,
                    0xA54FF53Au,
                    static_cast<uint32_t>(counter),
                    static_cast<uint32_t>(counter >> 32),
                    block_len,
                    flags};
  Round<0>(s, block);
  Round<1>(s, block);
  Round<2>(s, block);
  Round<3>(s, block);
  Round<4>(s, block);
  Round<5>(s, block);
  Round<6>(s, block);
  for (int j = 0; j < 8; ++j) out[j] = s[j] ^ s[j + 8];
}

}  // namespace gpu
}  // namespace wipeproof

// The fill kernel's per-team logic as host/device functions, so the CPU can run it thread by
// thread (tests, emulated_runtime.h) and the GPU runs the very same code (label_kernels.cu).
//
// A *team* is one thread block of G threads labeling C chunks of the same graph in lockstep
// (label-spec.md §3-§6). It walks the packed schedule (device_program.h) op by op; an op is one
// graph layer, applied to all C chunks. Its items (one node, or one butterfly pair, or one output
// label, of one chunk) are independent: every item writes only its own slots and reads only its
// own slots or slots no item of that op writes (the in-place argument of graph_schedule.h), and
// ops of one super-step touch disjoint slots, so the G threads split a super-step's items freely
// and one barrier between super-steps is the only synchronisation. Consecutive ops of a step
// start their items where the previous op's ended (`rotation`), so a step of many narrow ops
// spreads over all threads. Nothing here assumes a warp or wavefront width: G is blockDim.x, any
// value >= 1.
//
// Items are spread with the chunk index fastest (c = k % C), so for narrow layers (the recursion's
// leaves: 40% of all ops have width 1) each thread works on a different chunk ("lane = chunk") and
// the team stays busy although each chunk offers only 1..8 nodes; wide layers spread over chunks
// and nodes alike. Threads per chunk r = G / C trades lane utilisation against scratch: see
// docs/kernels.md for the table.
//
// Team scratch layout: label (slot, chunk c) at words [(slot * C + c) * 8, +8). Consecutive threads
// touch consecutive 32-byte labels, so global accesses coalesce for every C.
#pragma once

#include <cstdint>

#include "kernels/blake3_compress.h"
#include "kernels/gpu/device_program.h"
#include "kernels/gpu/fast_compress.h"
#include "kernels/gpu/kernel_args.h"
#include "kernels/host_device.h"
#include "kernels/node_hash.h"

namespace wipeproof {
namespace gpu {

constexpr uint32_t kChunkWords = 16;  // per-chunk material kept in shared memory
constexpr int kFormatC1 = 0;
constexpr int kFormat192 = 1;

// The chunk material: c1 words 0..7 = chunk_key(c) (spec §4); 192 words 0..15 = block 2 =
// chunk_seed(c) || descriptor(m') (spec §5). One compression: the key-derivation material
// (seed || be64(c) [|| be64(m)]) is a single block under the context key.
WP_HOST_DEVICE void DeriveChunkWords(const SessionConstants& s, uint64_t chunk, uint32_t out[kChunkWords]) {
  uint32_t block[16];
  for (int i = 0; i < 8; ++i) block[i] = s.seed[i];
  for (int i = 8; i < 16; ++i) block[i] = 0;
  block[8] = ByteSwap32(static_cast<uint32_t>(chunk >> 32));  // be64(c)
  block[9] = ByteSwap32(static_cast<uint32_t>(chunk));
  uint32_t len = 40;
  if (s.format == kFormatC1) {
    block[11] = ByteSwap32(s.chunk_labels);  // be64(m); m < 2^32, so word 10 stays 0
    len = 48;
  }
  FastCompressCv(s.chunk_context_key, block, 0, len, kDeriveKeyMaterial | kChunkStart | kChunkEnd | kRoot, out);
  for (int i = 0; i < 8; ++i) out[8 + i] = s.format == kFormatC1 ? 0u : s.descriptor[i];
}

// One node hash (spec §4 / §5). `chunk_words` is the chunk's material.
template <int kFormat>
WP_HOST_DEVICE void HashNode(const FillWaveArgs& a, const uint32_t* chunk_words, uint64_t node, bool source,
                             const uint32_t p0[8], const uint32_t p1[8], uint32_t out[8]) {
  uint32_t block[16];
  for (int i = 0; i < 8; ++i) {
    block[i] = p0[i];
    block[8 + i] = p1[i];
  }
  if constexpr (kFormat == kFormatC1) {
    FastCompressCv(chunk_words, block, node, kBlake3BlockBytes, kC1NodeFlags, out);
  } else {
    uint32_t cv[8];
    if (node < a.cv0_nodes) {
      for (int i = 0; i < 8; ++i) cv[i] = a.cv0[node * 8 + i];
    } else {
      // Block 0 = be64(node) || 56 zero bytes, under the source or internal context key.
      // (Word-wise select: choosing between the two arrays by pointer would force them into local memory.)
      uint32_t key[8];
      for (int i = 0; i < 8; ++i) key[i] = source ? a.session.src_key[i] : a.session.int_key[i];
      uint32_t block0[16] = {ByteSwap32(static_cast<uint32_t>(node >> 32)), ByteSwap32(static_cast<uint32_t>(node))};
      FastCompressCv(key, block0, 0, kBlake3BlockBytes, k192Block0Flags, cv);
    }
    FastCompressCv(cv, block, 0, kBlake3BlockBytes, k192Block1Flags, cv);
    FastCompressCv(cv, chunk_words, 0, kBlake3BlockBytes, k192Block2Flags, out);
  }
}

WP_HOST_DEVICE void LoadLabel(const uint32_t* p, uint32_t w[8]) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const uint4 a = reinterpret_cast<const uint4*>(p)[0];
  const uint4 b = reinterpret_cast<const uint4*>(p)[1];
  w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
#else
  for (int i = 0; i < 8; ++i) w[i] = p[i];
#endif
}

WP_HOST_DEVICE void StoreLabel(uint32_t* p, const uint32_t w[8]) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  reinterpret_cast<uint4*>(p)[0] = make_uint4(w[0], w[1], w[2], w[3]);
  reinterpret_cast<uint4*>(p)[1] = make_uint4(w[4], w[5], w[6], w[7]);
#else
  for (int i = 0; i < 8; ++i) p[i] = w[i];
#endif
}

// Observes every label access of an op (tests check that no two items of one op touch the same
// label with a write involved). The default does nothing and compiles away.
struct NoAccessObserver {
  WP_HOST_DEVICE void Read(uint32_t /*item*/, const uint32_t* /*label*/) const {}
  WP_HOST_DEVICE void Write(uint32_t /*item*/, const uint32_t* /*label*/) const {}
};

// One team's view of a launch.
struct Team {
  uint32_t* scratch = nullptr;            // C * scratch_labels labels
  const uint32_t* chunk_words = nullptr;  // kChunkWords per chunk
  uint64_t first_chunk = 0;               // global index of the team's chunk 0
  uint32_t chunks = 0;                    // chunks this team labels (<= C; fewer in the last team)
  uint32_t stride = 1;                    // C: the scratch layout's chunk stride
};

// The team for block `team` of launch `a`; `shared` is the block's dynamic shared memory
// (FillSharedBytes). Team.chunks is 0 for a block past the end.
WP_HOST_DEVICE Team MakeTeam(const FillWaveArgs& a, uint32_t team, uint32_t* shared) {
  Team t;
  t.stride = a.chunks_per_team;
  t.first_chunk = a.chunk_begin + static_cast<uint64_t>(team) * a.chunks_per_team;
  const uint64_t left = a.chunk_end > t.first_chunk ? a.chunk_end - t.first_chunk : 0;
  t.chunks = left < a.chunks_per_team ? static_cast<uint32_t>(left) : a.chunks_per_team;
  t.chunk_words = shared;
  t.scratch = a.scratch_in_shared ? shared + a.chunks_per_team * kChunkWords
                                  : reinterpret_cast<uint32_t*>(a.team_scratch[team]);
  return t;
}

// Before the first op: thread `thread` of `threads` derives its share of the chunk material.
// A barrier must follow.
WP_HOST_DEVICE void TeamPrologue(const FillWaveArgs& a, const Team& t, uint32_t* shared, uint32_t thread,
                                 uint32_t threads) {
  for (uint32_t c = thread; c < t.chunks; c += threads)
    DeriveChunkWords(a.session, t.first_chunk + c, shared + c * kChunkWords);
}

// Thread `thread` of `threads` runs its items of `op`: items k with k % threads == (thread -
// rotation) mod threads. A barrier must follow the last op of each super-step (op.step_end).
// REQUIRES: rotation < threads.
template <int kFormat, typename Observer = NoAccessObserver>
WP_HOST_DEVICE void TeamRunOp(const FillWaveArgs& a, const Team& t, const DeviceOp& op, uint32_t rotation,
                              uint32_t team_thread, uint32_t threads, const Observer& obs = Observer()) {
  const uint32_t C = t.chunks;
  const uint32_t thread = team_thread >= rotation ? team_thread - rotation : team_thread + threads - rotation;
  const uint64_t node_base = op.node_base;
  auto label = [&t](uint32_t slot, uint32_t c) {
    return t.scratch + (static_cast<uint64_t>(slot) * t.stride + c) * kLabelWords32;
  };
  const uint32_t zero[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  uint32_t in0[8], in1[8], out[8];
  switch (op.kind) {
    case kOpSource:
      for (uint32_t k = thread; k < C; k += threads) {
        HashNode<kFormat>(a, t.chunk_words + k * kChunkWords, node_base, /*source=*/true, zero, zero, out);
        obs.Write(k, label(op.dst, k));
        StoreLabel(label(op.dst, k), out);
      }
      return;
    case kOpSingle:
    case kOpMerge: {
      const uint32_t items = C * op.width;
      for (uint32_t k = thread; k < items; k += threads) {
        const uint32_t c = k % C, i = k / C;
        uint32_t* dst = label(op.dst + i, c);
        obs.Read(k, label(op.src + i, c));
        LoadLabel(label(op.src + i, c), in0);
        if (op.kind == kOpMerge) {
          obs.Read(k, dst);
          LoadLabel(dst, in1);  // spec §3: node(primary, ingress), primary emitted first
        } else {
          for (int w = 0; w < 8; ++w) in1[w] = 0;  // one predecessor: zeros
        }
        HashNode<kFormat>(a, t.chunk_words + c * kChunkWords, node_base + i, false, in0, in1, out);
        obs.Write(k, dst);
        StoreLabel(dst, out);
      }
      return;
    }
    case kOpButterfly: {
      // Pair (i, i + bit), i with bit clear: both nodes read (slot i, slot i + bit) in that order.
      const uint32_t bit = 1u << op.log_bit;
      const uint32_t items = C * (op.width >> 1);
      for (uint32_t k = thread; k < items; k += threads) {
        const uint32_t c = k % C, j = k / C;
        const uint32_t i = ((j >> op.log_bit) << (op.log_bit + 1)) | (j & (bit - 1));
        uint32_t* lo = label(op.dst + i, c);
        uint32_t* hi = label(op.dst + i + bit, c);
        obs.Read(k, lo);
        obs.Read(k, hi);
        LoadLabel(lo, in0);
        LoadLabel(hi, in1);
        const uint32_t* words = t.chunk_words + c * kChunkWords;
        uint32_t out_hi[8];
        HashNode<kFormat>(a, words, node_base + i, false, in0, in1, out);
        HashNode<kFormat>(a, words, node_base + i + bit, false, in0, in1, out_hi);
        obs.Write(k, lo);
        obs.Write(k, hi);
        StoreLabel(lo, out);
        StoreLabel(hi, out_hi);
      }
      return;
    }
    case kOpOutput: {
      // Rank-major within a chunk so consecutive threads write consecutive region slots.
      const uint32_t items = C * op.width;
      const uint64_t m = a.session.chunk_labels;
      const uint64_t region_end = a.region_first + a.region_count;
      for (uint32_t k = thread; k < items; k += threads) {
        const uint32_t c = k / op.width, r = k % op.width;
        const uint64_t g = (t.first_chunk + c) * m + op.first_rank + r;
        if (g < a.region_first || g >= region_end) continue;
        obs.Read(k, label(op.src + r, c));
        LoadLabel(label(op.src + r, c), out);
        StoreLabel(SlotAddress(a.slots, g - a.region_first), out);
      }
      return;
    }
    default:
      return;
  }
}

// Entry `node` of the 192 block-0 table.
WP_HOST_DEVICE void Cv0Entry(const Cv0BuildArgs& a, uint64_t node) {
  const bool source = node == a.source_nodes[0] || node == a.source_nodes[1];
  uint32_t key[8], cv[8];
  for (int i = 0; i < 8; ++i) key[i] = source ? a.src_key[i] : a.int_key[i];
  uint32_t block0[16] = {ByteSwap32(static_cast<uint32_t>(node >> 32)), ByteSwap32(static_cast<uint32_t>(node))};
  FastCompressCv(key, block0, 0, kBlake3BlockBytes, k192Block0Flags, cv);
  for (int i = 0; i < 8; ++i) a.table[node * 8 + i] = cv[i];
}

// The lookup kernel's item k.
WP_HOST_DEVICE void LookupOne(const LookupArgs& a, uint32_t k) {
  uint32_t w[8];
  LoadLabel(reinterpret_cast<const uint32_t*>(a.addresses[k]), w);
  for (int i = 0; i < 8; ++i) a.out[k * 8 + i] = w[i];  // mapped host memory: plain stores
}

}  // namespace gpu
}  // namespace wipeproof

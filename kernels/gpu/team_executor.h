// The fill kernel's per-team logic as host/device functions, so the CPU can run it thread by
// thread (tests, emulated_runtime.h) and the GPU runs the very same code (label_kernels.cu).
//
// A *team* is one thread block of G threads labelling C chunks of the same graph in lockstep
// (label-spec.md §3-§6). It walks the packed program (device_program.h) one super-step at a
// time. A step's ops each have `units` (a node, a butterfly pair, an output rank); the team pools
// the step's units of all C chunks into one item loop: item K is unit K / C of the step for chunk
// K % C (a multiply and a shift: ChunkDivider), and thread t takes items t, t + G, t + 2G, ... So
// every lane hashes in the same loop iteration whatever op its item belongs to (a step of forty
// width-1 ops keeps forty lanes busy at once), and items are numbered chunk-fastest (consecutive
// threads touch consecutive labels of the team block: coalesced). Items of one step never touch each other's labels
// (the in-place argument of graph_schedule.h, and levelling), so one block barrier between steps is the only
// synchronisation. Nothing assumes a warp or wavefront width: G is blockDim.x, any value >= 1.
//
// Work labels (kernel_args.h TeamDesc). A chunk's work slot s holds output rank s at the end
// (device_program.h), so in-place teams label their chunks in the chunks' own region slots: the
// team block holds label (rank s, chunk c) as two 16-byte halves at units s * 2C + h * C + c,
// so each of a warp's two 16-byte accesses reads contiguous bytes (full sectors). Scratch teams
// (partial chunks, GPU-filled host memory) work outside the region and copy their outputs to
// the natural layout.
//
// Per item, one node hash (two for a butterfly pair) in a loop, so the item body holds the
// format's compressions once (instruction cache): c1 one FastCompressCv; 192 block 1 and block 2,
// and block 0 in a branch taken only past the cached table.
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

constexpr int kFormatC1 = 0;
constexpr int kFormat192 = 1;

// The chunk material: c1 words 0..7 = chunk_key(c) (spec §4); 192 words 0..15 = block 2 =
// chunk_seed(c) || descriptor(m') (spec §5). One compression: the key-derivation material
// (seed || be64(c) [|| be64(m)]) is a single block under the context key.
WP_HOST_DEVICE void DeriveChunkWords(const SessionConstants& s, const uint32_t descriptor[8], uint64_t chunk,
                                     uint32_t out[kChunkWords]) {
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
  for (int i = 0; i < 8; ++i) out[8 + i] = s.format == kFormatC1 ? 0u : descriptor[i];
}

// 16-byte loads and stores of device memory (one vector access each on the device; global
// address space on HIP: host_device.h WP_GLOBAL_SPACE). HIP's uint4 is a class whose copy cannot
// read another address space, so HIP moves clang's own vector type.
#if defined(__HIP_DEVICE_COMPILE__)
using Words4 = unsigned int __attribute__((ext_vector_type(4)));
WP_HOST_DEVICE Words4 MakeWords4(const uint32_t w[4]) { return Words4{w[0], w[1], w[2], w[3]}; }
#elif defined(__CUDA_ARCH__)
using Words4 = uint4;
WP_HOST_DEVICE Words4 MakeWords4(const uint32_t w[4]) { return make_uint4(w[0], w[1], w[2], w[3]); }
#endif

WP_HOST_DEVICE void LoadHalf(const uint32_t* p, uint32_t w[4]) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  const Words4 v = *(const WP_GLOBAL_SPACE Words4*)p;
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
  for (int i = 0; i < 4; ++i) w[i] = p[i];
#endif
}

WP_HOST_DEVICE void StoreHalf(uint32_t* p, const uint32_t w[4]) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  *(WP_GLOBAL_SPACE Words4*)p = MakeWords4(w);
#else
  for (int i = 0; i < 4; ++i) p[i] = w[i];
#endif
}

// One node hash (spec §4 / §5) of the predecessor block `block` = pred0 || pred1 (zeros where
// absent). `chunk_words` is the chunk's material. Each compression runs through the one
// FastCompressCv below (192: block 0 unless cached, block 1, block 2, chosen per pass).
template <int kFormat, typename Word>
WP_HOST_DEVICE void HashNode(const FillWaveArgs& a, const Word* chunk_words, uint64_t node, bool source,
                             const uint32_t block[16], uint32_t out[8]) {
  if constexpr (kFormat == kFormatC1) {
    uint32_t key[8];
    for (int i = 0; i < 8; ++i) key[i] = chunk_words[i];
    FastCompressCv(key, block, node, kBlake3BlockBytes, kC1NodeFlags, out);
  } else {
    uint32_t cv[8];
    if (!source && node < a.cv0_nodes) {
      LoadHalf(a.cv0 + node * 8, cv);
      LoadHalf(a.cv0 + node * 8 + 4, cv + 4);
    } else {
      // Block 0 = be64(node) || 56 zero bytes, under the source or internal context key.
      // (Word-wise select: choosing between the two arrays by pointer would force them into local memory.)
      uint32_t key[8];
      for (int i = 0; i < 8; ++i) key[i] = source ? a.session.src_key[i] : a.session.int_key[i];
      uint32_t block0[16] = {ByteSwap32(static_cast<uint32_t>(node >> 32)), ByteSwap32(static_cast<uint32_t>(node))};
      FastCompressCv(key, block0, 0, kBlake3BlockBytes, k192Block0Flags, cv);
    }
    FastCompressCv(cv, block, 0, kBlake3BlockBytes, k192Block1Flags, cv);
    uint32_t words[16];
    for (int i = 0; i < 16; ++i) words[i] = chunk_words[i];
    FastCompressCv(cv, words, 0, kBlake3BlockBytes, k192Block2Flags, cv);
    for (int i = 0; i < 8; ++i) out[i] = cv[i];
  }
}

// Observes every label access of a step (tests check that no two items of one step touch the
// same label with a write involved). The default does nothing and compiles away. An observer with
// kAddressesOnly true gets every access but no node is hashed (zeros are stored): the addresses do
// not depend on the labels, so the race check runs on large graphs in a fraction of the time.
struct NoAccessObserver {
  static constexpr bool kAddressesOnly = false;
  WP_HOST_DEVICE void Read(uint64_t /*item*/, const uint32_t* /*half0*/) const {}
  WP_HOST_DEVICE void Write(uint64_t /*item*/, const uint32_t* /*half0*/) const {}
};

// One team's view of a launch. The descriptor is read from a copy in shared memory at every use
// rather than held in registers across the compression (the item loop's registers are the
// compression's). The graph's fields are copied with constant indices, so no address of a
// kernel parameter is taken (that would move the arguments to local memory).
struct Team {
  const WP_SHARED_SPACE TeamDesc* d = nullptr;  // shared memory: valid after the prologue's barrier
  const uint32_t* program = nullptr;
  const uint32_t* step_begin = nullptr;
  uint32_t steps = 0;
  WP_SHARED_SPACE uint32_t* chunk_words = nullptr;  // kChunkWords per chunk (shared memory)
};

// Words of shared memory before the chunk material: the team's descriptor.
constexpr uint32_t kTeamDescWords = (sizeof(TeamDesc) + 15) / 16 * 4;

// Dynamic shared memory of a fill team: its descriptor, then 16 words of chunk material per chunk.
WP_HOST_DEVICE uint64_t FillSharedBytes(uint32_t max_team_chunks) {
  return kTeamDescWords * 4 + static_cast<uint64_t>(max_team_chunks) * kChunkWords * 4;
}

// The team for block `b` of launch `a` (REQUIRES: b < a.team_count); `shared` is the block's
// dynamic shared memory (FillSharedBytes). Thread 0 copies the descriptor there; a barrier must
// follow before Team.d is read (TeamPrologue's).
WP_HOST_DEVICE Team MakeTeam(const FillWaveArgs& a, uint32_t b, uint32_t* shared, uint32_t thread) {
  const TeamDesc& desc = a.teams[b];
  if (thread == 0) *reinterpret_cast<TeamDesc*>(shared) = desc;
  Team t;
  t.d = (const WP_SHARED_SPACE TeamDesc*)shared;
  const bool g1 = desc.graph != 0;
  t.program = g1 ? a.graph[1].program : a.graph[0].program;
  t.step_begin = g1 ? a.graph[1].step_begin : a.graph[0].step_begin;
  t.steps = g1 ? a.graph[1].steps : a.graph[0].steps;
  t.chunk_words = (WP_SHARED_SPACE uint32_t*)(shared + kTeamDescWords);
  return t;
}

// The two 16-byte halves of work label (slot s, chunk c) of team t (kernel_args.h TeamDesc): half 1
// is C units after half 0. One branch on the team's flags (uniform across the team) keeps the
// common case, a block inside one piece, to a multiply-add and a shift.
struct LabelPtr {
  uint32_t* h0;
  uint32_t* h1;
};

WP_HOST_DEVICE LabelPtr WorkLabel(const FillWaveArgs& a, const Team& t, uint32_t s, uint32_t c) {
  // Volatile: the descriptor is read again at every use, so addresses are recomputed after the
  // compression rather than held in registers across it (a few shared-memory loads per item).
#if defined(__HIP_DEVICE_COMPILE__)
  const WP_SHARED_SPACE TeamDesc& d = *t.d;
#else
  const volatile WP_SHARED_SPACE TeamDesc& d = *t.d;
#endif
  const uint64_t C = d.chunks;
  if (s >= d.inplace_slots) {
    uint32_t* p =
        reinterpret_cast<uint32_t*>(d.extra) + (2 * static_cast<uint64_t>(s - d.inplace_slots) * C + c) * kHalfWords32;
    return {p, p + C * kHalfWords32};
  }
  const uint64_t u0 = 2 * static_cast<uint64_t>(s) * C + c, u1 = u0 + C;
  if ((d.flags & (kTeamSplit | kTeamSlotTable)) == 0) {
    uint32_t* p = reinterpret_cast<uint32_t*>(d.seg0) + u0 * kHalfWords32;
    return {p, p + C * kHalfWords32};
  }
  LabelPtr r;
  const uint64_t u[2] = {u0, u1};
  uint32_t* out[2];
  for (int h = 0; h < 2; ++h) {
    if (d.flags & kTeamSlotTable) {
      out[h] = SlotAddress(a.slots, d.block_slot + u[h] / 2) + (u[h] & 1) * kHalfWords32;
    } else {
      out[h] = u[h] < d.split ? reinterpret_cast<uint32_t*>(d.seg0) + u[h] * kHalfWords32
                              : reinterpret_cast<uint32_t*>(d.seg1) + (u[h] - d.split) * kHalfWords32;
    }
  }
  r.h0 = out[0];
  r.h1 = out[1];
  return r;
}

// Before the first step: thread `thread` of `threads` derives its share of the chunk material of
// block b's team t. A barrier must follow.
WP_HOST_DEVICE void TeamPrologue(const FillWaveArgs& a, uint32_t b, const Team& t, uint32_t thread, uint32_t threads) {
  const TeamDesc& desc = a.teams[b];  // the shared copy is not visible before the barrier
  uint32_t descriptor[8];
  for (int i = 0; i < 8; ++i) descriptor[i] = desc.graph != 0 ? a.graph[1].descriptor[i] : a.graph[0].descriptor[i];
  for (uint32_t c = thread; c < desc.chunks; c += threads) {
    uint32_t words[kChunkWords];
    DeriveChunkWords(a.session, descriptor, desc.first_chunk + c, words);
    for (uint32_t i = 0; i < kChunkWords; ++i) t.chunk_words[c * kChunkWords + i] = words[i];
  }
}

// Item (unit u of `op`, chunk c) of team t. `item` only names it for the observer.
template <int kFormat, typename Observer>
WP_HOST_DEVICE void TeamRunItem(const FillWaveArgs& a, const Team& t, const DeviceOp& op, uint32_t u, uint32_t c,
                                uint64_t item, const Observer& obs) {
  uint32_t block[16];
  for (int i = 0; i < 16; ++i) block[i] = 0;
  uint32_t slot0 = op.dst, slot1 = 0, hashes = 1;
  uint64_t node0 = op.node_base;
  switch (op.kind) {
    case kOpSource:
      break;
    case kOpSingle:
    case kOpMerge: {
      slot0 = op.dst + u;
      node0 += u;
      const LabelPtr in = WorkLabel(a, t, op.src + u, c);
      obs.Read(item, in.h0);
      LoadHalf(in.h0, block);
      LoadHalf(in.h1, block + 4);
      if (op.kind == kOpMerge) {  // spec §3: node(primary, ingress), primary emitted first
        const LabelPtr ingress = WorkLabel(a, t, slot0, c);
        obs.Read(item, ingress.h0);
        LoadHalf(ingress.h0, block + 8);
        LoadHalf(ingress.h1, block + 12);
      }
      break;
    }
    case kOpButterfly: {
      // Pair (i, i + bit), i with bit clear: both nodes read (slot i, slot i + bit) in that order.
      const uint32_t bit = 1u << op.log_bit;
      const uint32_t i = ((u >> op.log_bit) << (op.log_bit + 1)) | (u & (bit - 1));
      slot0 = op.dst + i;
      slot1 = slot0 + bit;
      node0 += i;
      hashes = 2;
      const LabelPtr lo = WorkLabel(a, t, slot0, c), hi = WorkLabel(a, t, slot1, c);
      obs.Read(item, lo.h0);
      obs.Read(item, hi.h0);
      LoadHalf(lo.h0, block);
      LoadHalf(lo.h1, block + 4);
      LoadHalf(hi.h0, block + 8);
      LoadHalf(hi.h1, block + 12);
      break;
    }
    case kOpOutput: {
      // Scratch teams only: chunk-major, so consecutive threads write consecutive region slots.
      if (t.d->inplace_slots > 0) return;  // in place: rank r already sits in its slot
      const uint64_t k = static_cast<uint64_t>(u) * t.d->chunks + c;
      const uint32_t cc = static_cast<uint32_t>(k / op.width), r = static_cast<uint32_t>(k % op.width);
      if (cc >= t.d->chunks) return;
      const uint64_t g = (t.d->first_chunk + cc) * a.session.chunk_labels + op.first_rank + r;
      if (g < a.region_first || g >= a.region_first + a.region_count) return;
      uint32_t w[8];
      const LabelPtr from = WorkLabel(a, t, op.src + r, cc);
      obs.Read(item, from.h0);
      LoadHalf(from.h0, w);
      LoadHalf(from.h1, w + 4);
      uint32_t* dst = SlotAddress(a.slots, g - a.region_first);
      obs.Write(item, dst);
      StoreHalf(dst, w);
      StoreHalf(dst + kHalfWords32, w + 4);
      return;
    }
    default:
      return;
  }
  const WP_SHARED_SPACE uint32_t* words = t.chunk_words + c * kChunkWords;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#pragma unroll 1
#endif
  for (uint32_t q = 0; q < hashes; ++q) {
    uint32_t out[8];
    if constexpr (Observer::kAddressesOnly) {
      for (int i = 0; i < 8; ++i) out[i] = 0;
    } else {
      HashNode<kFormat>(a, words, node0 + (q ? 1ull << op.log_bit : 0), op.kind == kOpSource, block, out);
    }
    const LabelPtr to = WorkLabel(a, t, q ? slot1 : slot0, c);
    obs.Write(item, to.h0);
    StoreHalf(to.h0, out);
    StoreHalf(to.h1, out + 4);
  }
}

// Records a fault (kernel_args.h kFault*) in the launch's fault word, if it has one. On the
// device several threads may raise one at once; the emulation runs one thread at a time.
WP_HOST_DEVICE void RaiseFault(const FillWaveArgs& a, uint32_t bits) {
  if (a.fault == nullptr) return;
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  atomicOr(a.fault, bits);
#else
  *a.fault |= bits;
#endif
}

// Thread `thread` of `threads` runs its items of super-step `step` (items K = thread + j*threads,
// in increasing order; `reverse` runs them in decreasing order, for the emulation's race check).
// A barrier must follow.
//
// Bounded. Item k < items is unit k / C of chunk k % C, and items = C * (the step's last op's
// unit count), so the forward search for an item's op stops at the step's last op at the latest,
// provided the step has an op (end > first) and the team's divider splits k exactly (chunk
// c < C). Both are checked, and a program that fails them (a corrupt or mismatched upload; the
// host checks every program before uploading it, device_program.h CheckDeviceProgram, and reads
// the step bounds back) raises a fault and ends the thread's step instead of searching past the
// step forever. The check holds no register across the compression (the c1 kernel sits at its
// 64-register bound on CUDA, and at 80 VGPRs on HIP gfx940).
template <int kFormat, typename Observer = NoAccessObserver>
WP_HOST_DEVICE void TeamRunStep(const FillWaveArgs& a, const Team& t, uint32_t step, uint32_t thread, uint32_t threads,
                                bool reverse = false, const Observer& obs = Observer()) {
  const uint32_t* program = t.program;
  const uint32_t first = t.step_begin[step], end = t.step_begin[step + 1];
  if (end <= first) return RaiseFault(a, kFaultEmptyStep);
  const uint32_t items = program[(end - 1) * kOpWords + 3] * t.d->chunks;  // < 2^29
  if (thread >= items) return;
  const uint32_t last = thread + (items - 1 - thread) / threads * threads;
  uint32_t o = reverse ? end - 1 : first;
  DeviceOp op = DecodeOp(program, o);
  for (uint32_t k = reverse ? last : thread;;) {
    const uint32_t unit = static_cast<uint32_t>((k * t.d->chunk_magic) >> t.d->chunk_shift);
    const uint32_t c = k - unit * t.d->chunks;
    if (c >= t.d->chunks) return RaiseFault(a, kFaultDivider);
    if (!reverse) {
      while (unit >= op.unit_end) op = DecodeOp(program, ++o);  // the item's op: units ascend with k
    } else {
      while (unit < op.unit_end - OpUnits(op)) {  // (the emulation only: bounded by the step's first op)
        if (o == first) return RaiseFault(a, kFaultOpSearch);
        op = DecodeOp(program, --o);
      }
    }
    const uint32_t op_units = OpUnits(op);
    TeamRunItem<kFormat>(a, t, op, unit - (op.unit_end - op_units), c, k, obs);
    if (reverse ? k == thread : k == last) break;
    k = reverse ? k - threads : k + threads;
  }
}

// Entry `node` of the 192 block-0 table. The fill builds it with no source nodes (every entry
// under the internal key) and HashNode computes the two sources' block 0 itself, so one table
// serves graph m and a trailing partial chunk's graph m'.
WP_HOST_DEVICE void Cv0Entry(const Cv0BuildArgs& a, uint64_t node) {
  const bool source = node == a.source_nodes[0] || node == a.source_nodes[1];
  uint32_t key[8], cv[8];
  for (int i = 0; i < 8; ++i) key[i] = source ? a.src_key[i] : a.int_key[i];
  uint32_t block0[16] = {ByteSwap32(static_cast<uint32_t>(node >> 32)), ByteSwap32(static_cast<uint32_t>(node))};
  FastCompressCv(key, block0, 0, kBlake3BlockBytes, k192Block0Flags, cv);
  for (int i = 0; i < 8; ++i) a.table[node * 8 + i] = cv[i];
}

// The device address of half h of lookup label k (kernel_args.h LookupArgs: the host's address,
// or the kernel's own placement of the label's global index); 0 for an index outside the region
// (label_places.h InRegion).
WP_HOST_DEVICE uint64_t LookupHalfAddress(const LookupArgs& a, uint64_t k, int h) {
  if (a.indices == nullptr) return a.addresses[2 * k + h];
  const uint64_t g = a.indices[k];
  if (!InRegion(a.places, g)) return 0;
  uint64_t slot[2];
  uint32_t byte_offset[2];
  LocateHalves(a.places, g, slot, byte_offset);
  // (Selects, not slot[h]: a run-time index would put the arrays in local memory.)
  return h == 0 ? SlotAddress(a.places, slot[0], byte_offset[0]) : SlotAddress(a.places, slot[1], byte_offset[1]);
}

// The lookup kernel's item k: two 16-byte loads, two 16-byte stores into mapped host memory
// (LookupArgs::out is 16-byte aligned).
WP_HOST_DEVICE void LookupOne(const LookupArgs& a, uint32_t k) {
  uint32_t w[8];
  if (a.indices == nullptr) {
    LoadHalf(reinterpret_cast<const uint32_t*>(a.addresses[2 * k]), w);
    LoadHalf(reinterpret_cast<const uint32_t*>(a.addresses[2 * k + 1]), w + 4);
  } else if (InRegion(a.places, a.indices[k])) {
    uint64_t address[2];
    PlaceLabel(a.places, a.indices[k], address);
    LoadHalf(reinterpret_cast<const uint32_t*>(address[0]), w);
    LoadHalf(reinterpret_cast<const uint32_t*>(address[1]), w + 4);
  } else {
    for (int i = 0; i < 8; ++i) w[i] = 0;
  }
  StoreHalf(a.out + static_cast<uint64_t>(k) * 8, w);
  StoreHalf(a.out + static_cast<uint64_t>(k) * 8 + 4, w + 4);
}

// The eight-threads-a-label lookup's item t (t < 8n): word t % 8 of label t / 8, from its half
// (words 0-3: the first half, words 4-7: the second). Consecutive items write consecutive words,
// so a warp's 32 stores are one 128-byte line.
WP_HOST_DEVICE void LookupWord(const LookupArgs& a, uint64_t t) {
  const uint64_t k = t >> 3;
  const uint32_t word = static_cast<uint32_t>(t & 7);
  const uint64_t address = LookupHalfAddress(a, k, static_cast<int>(word >> 2));
  a.out[t] = address != 0 ? reinterpret_cast<const uint32_t*>(address)[word & 3] : 0;
}

}  // namespace gpu
}  // namespace wipeproof

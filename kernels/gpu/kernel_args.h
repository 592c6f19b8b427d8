// Plain-data arguments of the GPU kernels, shared by the kernels (device), the CPU emulation of the
// kernels (tests) and the host code that fills them in. No runtime types: device addresses are
// plain pointers, valid on the device the kernel runs on (host pointers in the emulation).
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace wipeproof {
namespace gpu {

constexpr uint32_t kLabelWords32 = 8;  // a label is 8 little-endian 32-bit words

// Per-session constants of a fill, derived on the host once (session_constants.h). The per-chunk
// material (c1 chunk_key, 192 chunk_seed) is derived on the device from these: one compression
// per chunk, so no per-chunk table has to be uploaded (a full H200 at m = 2^14 has ~265k chunks).
struct SessionConstants {
  uint32_t format = 0;        // LabelFormat: 0 = c1, 1 = 192
  uint32_t chunk_labels = 0;  // m: global index g lives in chunk g / m at rank g % m
  uint32_t seed[8] = {};      // session seed as little-endian words
  // c1: context_key("wipeproof/posedb-blake3-c1/chunk-key"); 192: context_key("pose-db/chunk-seed").
  uint32_t chunk_context_key[8] = {};
  uint32_t int_key[8] = {};     // 192: context_key("pose-db/label/int")
  uint32_t src_key[8] = {};     // 192: context_key("pose-db/label/src")
  uint32_t descriptor[8] = {};  // 192: descriptor(m') of the graph being run
};

// Where region slot s (= global index - region first) lives: in allocation i with
// slot_begin[i] <= s < slot_begin[i+1], at base[i] + 32 * (s - slot_begin[i]).
struct SlotTableView {
  const uint64_t* slot_begin = nullptr;  // count + 1 entries, ascending, slot_begin[0] == 0
  const uint64_t* base = nullptr;        // count device addresses (as integers)
  uint32_t count = 0;
};

// Binary search: the address of slot `s`. REQUIRES: s < slot_begin[count].
WP_HOST_DEVICE uint32_t* SlotAddress(const SlotTableView& t, uint64_t s) {
  uint32_t lo = 0, hi = t.count;  // invariant: slot_begin[lo] <= s < slot_begin[hi]
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (t.slot_begin[mid] <= s) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return reinterpret_cast<uint32_t*>(t.base[lo]) + (s - t.slot_begin[lo]) * kLabelWords32;
}

// One launch of the fill kernel: chunks [chunk_begin, chunk_end) of one graph program, C chunks per
// team (thread block), team b taking chunks chunk_begin + b*C ... (grid = ceil(chunks / C) teams).
struct FillWaveArgs {
  SessionConstants session;
  const uint32_t* program = nullptr;  // device_program.h: kOpWords words per op, in super-steps
  uint32_t op_count = 0;
  uint32_t scratch_labels = 0;  // 2^level: slots per chunk
  // 192 block-0 chaining values for node numbers [0, cv0_nodes), 8 words each; the rest are computed.
  const uint32_t* cv0 = nullptr;
  uint64_t cv0_nodes = 0;
  uint64_t region_first = 0;  // outputs outside [region_first, region_first + region_count) are dropped
  uint64_t region_count = 0;
  uint64_t chunk_begin = 0;
  uint64_t chunk_end = 0;
  uint32_t chunks_per_team = 1;    // C
  uint32_t scratch_in_shared = 0;  // 1: team scratch in dynamic shared memory, team_scratch unused
  // Team b's scratch: C * scratch_labels labels at team_scratch[b], layout [(slot * C + c) * 8 + word].
  const uint64_t* team_scratch = nullptr;
  SlotTableView slots;
};

// Dynamic shared memory of a fill team: 16 words of chunk material per chunk, then (when
// scratch_in_shared) the team scratch.
WP_HOST_DEVICE uint64_t FillSharedBytes(uint32_t chunks_per_team, uint32_t scratch_labels, bool scratch_in_shared) {
  uint64_t bytes = static_cast<uint64_t>(chunks_per_team) * 16 * 4;
  if (scratch_in_shared) bytes += static_cast<uint64_t>(chunks_per_team) * scratch_labels * 32;
  return bytes;
}

// The lookup kernel: out[k] = the label at addresses[k], k < n. The host maps global indices to
// device addresses (SlotMap), so no table has to stay on the device after the fill.
struct LookupArgs {
  const uint64_t* addresses = nullptr;  // device-visible (mapped pinned host memory)
  uint32_t* out = nullptr;              // device-visible, n * 8 words
  uint32_t n = 0;
};

// The 192 format's block-0 chaining-value table (label-spec.md §5), built on the device: node n
// gets compress(key, be64(n) || 0^56) under the internal context key, except the graph's two
// source nodes (one per standalone copy), which use the source key.
struct Cv0BuildArgs {
  uint32_t* table = nullptr;  // nodes * 8 words
  uint64_t nodes = 0;
  uint32_t int_key[8] = {};
  uint32_t src_key[8] = {};
  uint64_t source_nodes[2] = {~0ull, ~0ull};
};

}  // namespace gpu
}  // namespace wipeproof

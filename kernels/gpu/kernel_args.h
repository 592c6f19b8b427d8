// Plain-data arguments of the GPU kernels, shared by the kernels (device), the CPU emulation of the
// kernels (tests) and the host code that fills them in. No runtime types: device addresses are
// plain pointers (or integers), valid on the device the kernel runs on (host pointers in the
// emulation).
#pragma once

#include <cstdint>

#include "kernels/gpu/label_places.h"
#include "kernels/host_device.h"

namespace wipeproof {
namespace gpu {

constexpr uint32_t kLabelWords32 = 8;  // a label is 8 little-endian 32-bit words
constexpr uint32_t kHalfWords32 = 4;   // labels move as two 16-byte halves
constexpr uint32_t kChunkWords = 16;   // per-chunk material kept in shared memory

// Per-session constants of a fill, derived on the host once (session_constants.h). The per-chunk
// material (c1 chunk_key, 192 chunk_seed) is derived on the device from these: one compression
// per chunk, so no per-chunk table has to be uploaded (a full H200 at m = 2^14 has ~280k chunks).
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

// One graph a launch runs (device_program.h): the main graph (m), or a 192 trailing partial
// chunk's graph (m').
struct FillGraph {
  const uint32_t* program = nullptr;     // kOpWords words per op, grouped by super-step
  const uint32_t* step_begin = nullptr;  // steps + 1 entries
  uint32_t steps = 0;
  uint32_t work_labels = 0;     // work slots per chunk (WorkLabels)
  uint32_t descriptor[8] = {};  // 192: descriptor(m') of this graph; c1: unused
};

// Chunks per team, at most: keeps item numbers below 2^29 (2^21 units per step at m = 2^20).
constexpr uint32_t kMaxTeamChunks = 256;

// Division of item numbers k < 2^29 by C <= kMaxTeamChunks as a multiply and a shift, exact:
// with s = ceil(log2 C), magic = ceil(2^(32+s) / C) < 2^33 and k * magic < 2^62.
struct ChunkDivider {
  uint64_t magic = 0;
  uint32_t shift = 0;
};
WP_HOST_DEVICE ChunkDivider MakeChunkDivider(uint32_t chunks) {
  uint32_t s = 0;
  while ((1u << s) < chunks) ++s;
  ChunkDivider d;
  d.shift = 32 + s;
  d.magic = ((1ull << d.shift) + chunks - 1) / chunks;
  return d;
}

// Team flags.
constexpr uint32_t kTeamSplit = 1;      // the block crosses one allocation boundary: units >= split at seg1
constexpr uint32_t kTeamSlotTable = 2;  // the block spans more than two pieces: every access via SlotAddress

// One team (thread block) of a launch: C chunks of one graph in lockstep, and where their work
// labels live (team_executor.h has the layout and the addressing):
//  - in place (inplace_slots > 0): work slot s < inplace_slots of chunk c is a label of the
//    region's *team block*, C * m consecutive region slots starting at block_slot, as 16-byte
//    units u = s * 2C + half * C + c, at seg0 + 16u; with kTeamSplit (a block crossing one
//    allocation boundary) units [split, ...) are at seg1 + 16(u - split) instead; with
//    kTeamSlotTable every unit is found through the slot table. Work slots >= inplace_slots (m not a power of two)
//    are at `extra`, units ((s - inplace_slots) * 2C + half * C + c).
//  - scratch (inplace_slots == 0): every work slot is at `extra`, and the program's output ops
//    copy ranks to the region in the natural layout (label g at region slot g - region_first).
struct TeamDesc {
  uint64_t first_chunk = 0;  // global chunk index of the team's chunk 0
  uint64_t block_slot = 0;   // in place: region slot of the team block's first label
  uint64_t seg0 = 0;         // in place: device address of unit 0
  uint64_t seg1 = 0;         // in place: device address of unit `split`
  uint64_t extra = 0;        // device address of the work labels outside the region
  uint64_t chunk_magic = 0;  // item k is unit (k * chunk_magic) >> chunk_shift (ChunkDivider)
  uint32_t chunk_shift = 0;
  uint32_t split = 0;   // in place: units at seg0 (the whole block: 2 * C * inplace_slots)
  uint32_t chunks = 0;  // C <= kMaxTeamChunks: chunks of this team, also the layout's stride
  uint32_t inplace_slots = 0;
  uint32_t graph = 0;  // index into FillWaveArgs::graph
  uint32_t flags = 0;
};

// One launch of the fill kernel: team b runs teams[b] (grid = team_count blocks).
struct FillWaveArgs {
  SessionConstants session;
  FillGraph graph[2];
  // 192 block-0 chaining values for node numbers [0, cv0_nodes), 8 words each; the rest are computed.
  const uint32_t* cv0 = nullptr;
  uint64_t cv0_nodes = 0;
  uint64_t region_first = 0;  // scratch teams drop outputs outside [first, first + count)
  uint64_t region_count = 0;
  const TeamDesc* teams = nullptr;  // team_count entries (device memory)
  uint32_t team_count = 0;
  uint32_t max_team_chunks = 0;  // the largest TeamDesc::chunks: sizes the shared memory
  SlotTableView slots;
  // Optional (device memory, 2 entries): block 0's thread 0 writes its SM clock counter at start
  // and end, so the host learns the clock the launch ran at.
  uint64_t* clock_out = nullptr;
  // Optional (device memory, kTeamTimerWords words, zero before the launch): each block's thread 0
  // adds its team's start and end on a device-wide timer, so the host learns how far apart the
  // teams of a launch finish (ticks; only ratios are meaningful). Words: see kTeamTimer*. Nothing
  // is held in a register from a team's start to its end (the c1 kernel has none to spare).
  uint64_t* team_timer = nullptr;
  // Optional (device memory, one word, zero before the launch): the kernel ORs kFault* bits into it
  // when a program or a team does not fit its own bounds (team_executor.h TeamRunStep); the host
  // reads it after the launch and fails the fill. A corrupt upload so ends the launch instead of
  // spinning forever (data-centre GPUs have no watchdog to kill it).
  uint32_t* fault = nullptr;
};

// Words of FillWaveArgs::team_timer. The sums wrap (modulo 2^64): their difference is still the
// sum of the teams' spans. The minima are kept as maxima of their complements, so zero-filled
// words start every extreme right.
constexpr int kTeamTimerStartSum = 0;       // the sum of the teams' starts
constexpr int kTeamTimerEndSum = 1;         // the sum of the teams' ends
constexpr int kTeamTimerFirstStartNot = 2;  // ~(the earliest team start)
constexpr int kTeamTimerLastStart = 3;      // the latest team start
constexpr int kTeamTimerFirstEndNot = 4;    // ~(the earliest team end)
constexpr int kTeamTimerLastEnd = 5;        // the latest team end
constexpr int kTeamTimerStarted = 6;        // teams that recorded their start
constexpr int kTeamTimerEnded = 7;          // teams that recorded their end
constexpr int kTeamTimerWords = 8;

// Bits of FillWaveArgs::fault.
constexpr uint32_t kFaultEmptyStep = 1;  // a step whose op range is empty or reversed
constexpr uint32_t kFaultDivider = 2;    // a team's chunk divider does not split item numbers exactly
constexpr uint32_t kFaultOpSearch = 4;   // (emulated reverse order) an item's unit lies before its step's first op

// The lookup kernel: label k of n. Its two 16-byte halves are found one of two ways:
//  - `indices` null: at the device addresses addresses[2k] and addresses[2k + 1], which the host
//    worked out (label_places.h PlaceLabel over its own tables);
//  - `indices` set: global index indices[k], placed by the kernel itself through `places`, a copy
//    of the region's tables in device memory, so the host only copies the indices in.
// Two shapes of the same lookup (the same bytes in `out`): one thread a label (two 16-byte loads,
// two 16-byte stores: a warp's stores cover every other 16 bytes of 1 KiB, so writes into mapped
// host memory cross the bus as partial lines), or eight threads a label, one word each (a warp
// writes 128 contiguous bytes). Which are faster is measured (wipeproof-gpu-check lookup, "parts"
// and "kernel_shapes"); DeviceRegion's defaults follow the measurements (device_region.h).
struct LookupArgs {
  const uint64_t* addresses = nullptr;  // device-visible (mapped pinned host memory), 2n entries
  const uint64_t* indices = nullptr;    // device-visible, n entries; set: placed through `places`
  LabelPlaces places;                   // with `indices`: tables in device memory
  uint32_t* out = nullptr;              // device-visible, n * 8 words, 16-byte aligned
  uint32_t n = 0;
  uint32_t threads_per_label = 1;  // 1 (LookupOne) or 8 (LookupWord); anything else is an error
};

// The 192 format's block-0 chaining-value table (label-spec.md §5), built on the device: node n
// gets compress(key, be64(n) || 0^56) under the internal context key, except the source nodes
// named here, which use the source key. (The fill names none: its kernel computes the sources'
// block 0 itself, so one table serves every graph size.)
struct Cv0BuildArgs {
  uint32_t* table = nullptr;  // nodes * 8 words
  uint64_t nodes = 0;
  uint32_t int_key[8] = {};
  uint32_t src_key[8] = {};
  uint64_t source_nodes[2] = {~0ull, ~0ull};
};

}  // namespace gpu
}  // namespace wipeproof

// Where a filled region keeps each label, as arithmetic the host and the lookup kernel share: a
// global index -> its two 16-byte halves' region slots (the layout of whole chunks in their teams'
// blocks, prover/backends/gpu/label_layout.h explains it) -> each slot's piece and offset (the
// pieces memory acquisition took, memory_acquisition.h SlotMap) -> a device address.
//
// The host classes LabelLayout and SlotMap hold the tables and call these functions; a lookup
// either places the halves on the host and hands the kernel addresses, or hands the kernel the
// indices and a copy of the tables in device memory (kernel_args.h LookupArgs), so that the
// host's share of a lookup is one copy of the indices.
//
// Thread-safety: pure functions of immutable tables.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace wipeproof {
namespace gpu {

// A run of in-place teams: chunks [chunk_begin, chunk_end), team j taking chunks
// chunk_begin + j*C ... (the last one fewer) into its block.
struct PlaceRun {
  uint64_t chunk_begin = 0, chunk_end = 0;
  uint32_t chunks_per_team = 0;
};

// The tables of one region, as plain pointers (host memory for the host, device memory for the
// kernel).
struct LabelPlaces {
  // The layout: the region's first global index, its chunk size m (m_shift = log2 m when m is a
  // power of two, else -1), and its runs in increasing chunk order.
  uint64_t first = 0;
  uint64_t count = 0;  // the region's labels: [first, first + count)
  uint32_t m = 1;
  int32_t m_shift = 0;
  const PlaceRun* runs = nullptr;
  uint32_t run_count = 0;
  // The slot map: piece i holds slots [slot_begin[i], slot_begin[i + 1]) at device address
  // bases[i]; bucket_piece[s >> bucket_shift] is the piece holding slot (s >> bucket_shift) <<
  // bucket_shift, and a bucket spans at most one boundary between non-empty pieces.
  const uint64_t* slot_begin = nullptr;  // pieces + 1 entries
  const uint64_t* bases = nullptr;       // pieces entries
  const uint32_t* bucket_piece = nullptr;
  int32_t bucket_shift = 0;
};

// Runs past this many are searched by bisection; up to it they are counted without branches (a
// random index would mispredict every branch of a bisection).
constexpr uint32_t kPlaceRunsCounted = 32;

// The region slots and byte offsets (0 or 16) of global index g's two halves.
// REQUIRES: first <= g < first + the region's count.
WP_HOST_DEVICE void LocateHalves(const LabelPlaces& p, uint64_t g, uint64_t slot[2], uint32_t byte_offset[2]) {
  // m is a power of two in practice (a shift), and a chunk's offset in its run fits 32 bits (a far
  // cheaper division than 64 bits).
  const uint64_t chunk = p.m_shift >= 0 ? g >> p.m_shift : g / p.m;
  const uint64_t rank = g - chunk * p.m;
  uint32_t after = 0;  // runs starting at or before the chunk
  if (p.run_count <= kPlaceRunsCounted) {
    for (uint32_t i = 0; i < p.run_count; ++i) after += p.runs[i].chunk_begin <= chunk;
  } else {
    uint32_t lo = 0, hi = p.run_count;
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (p.runs[mid].chunk_begin <= chunk) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    after = lo;
  }
  if (after > 0 && chunk < p.runs[after - 1].chunk_end) {
    const PlaceRun& r = p.runs[after - 1];
    const uint64_t offset = chunk - r.chunk_begin;
    const uint64_t team_offset =
        offset <= 0xFFFFFFFFull ? static_cast<uint32_t>(offset) / r.chunks_per_team : offset / r.chunks_per_team;
    const uint64_t team_first = r.chunk_begin + team_offset * r.chunks_per_team;
    const uint64_t left = r.chunk_end - team_first;
    const uint64_t C = r.chunks_per_team < left ? r.chunks_per_team : left;
    const uint64_t block_slot = team_first * p.m - p.first;
    for (int h = 0; h < 2; ++h) {
      const uint64_t unit = (rank * 2 + h) * C + (chunk - team_first);
      slot[h] = block_slot + unit / 2;
      byte_offset[h] = static_cast<uint32_t>(unit & 1) * 16;
    }
    return;
  }
  slot[0] = slot[1] = g - p.first;
  byte_offset[0] = 0;
  byte_offset[1] = 16;
}

// The piece holding `slot`. REQUIRES: slot < the map's slots.
WP_HOST_DEVICE uint32_t LocatePiece(const LabelPlaces& p, uint64_t slot) {
  uint32_t piece = p.bucket_piece[slot >> p.bucket_shift];
  piece += p.slot_begin[piece + 1] <= slot;         // the usual case, without a branch to mispredict
  while (p.slot_begin[piece + 1] <= slot) ++piece;  // only past pieces of no slot, or very small ones
  return piece;
}

// The device address of a slot's byte `byte_offset`.
WP_HOST_DEVICE uint64_t SlotAddress(const LabelPlaces& p, uint64_t slot, uint32_t byte_offset) {
  const uint32_t piece = LocatePiece(p, slot);
  return p.bases[piece] + (slot - p.slot_begin[piece]) * 32 + byte_offset;
}

// Whether global index g is one of the region's. The host checks every index before a lookup;
// the lookup kernel checks again, and answers an index outside with zeros rather than follow the
// tables past their ends.
WP_HOST_DEVICE bool InRegion(const LabelPlaces& p, uint64_t g) { return g >= p.first && g - p.first < p.count; }

// The device addresses of global index g's two halves. REQUIRES: as LocateHalves.
WP_HOST_DEVICE void PlaceLabel(const LabelPlaces& p, uint64_t g, uint64_t address[2]) {
  uint64_t slot[2];
  uint32_t byte_offset[2];
  LocateHalves(p, g, slot, byte_offset);
  address[0] = SlotAddress(p, slot[0], byte_offset[0]);
  address[1] = SlotAddress(p, slot[1], byte_offset[1]);
}

}  // namespace gpu
}  // namespace wipeproof

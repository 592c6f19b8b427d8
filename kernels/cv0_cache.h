// Process-wide cache of the 192 format's block-0 chaining values (label-spec.md §5): block 0 is
// be64(node) || zeros, so its chaining value depends only on the node number and on whether the
// node is a source; one table serves every chunk and session with the same m. It turns the 192
// node hash from 3 compressions into 2 for the nodes it covers.
//
// Thread-safety: thread-safe; returned tables are immutable and live until process exit.
#pragma once

#include <cstdint>

#include "kernels/simd/hash16.h"

namespace wipeproof {

// Default cap on one table: 64 MiB = 2^21 nodes (covers every node for m <= 2^13, the first
// 2^21 node numbers above that; the rest are computed).
constexpr uint64_t kDefaultCv0CacheBytes = 64ull << 20;

// The table for graphs of `graph_labels` outputs, built on first use (about 1 compression per
// covered node). Returns an empty table when max_bytes is 0.
Cv0Table Cv0TableFor(uint32_t graph_labels, uint64_t max_bytes = kDefaultCv0CacheBytes);

}  // namespace wipeproof

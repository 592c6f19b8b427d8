// Batch node hashing: 16 nodes with consecutive node numbers at once, in the engine's word-sliced
// ("SoA") label layout. Nodes of one graph layer are independent (graph_schedule.h), so the
// labeler hashes them 16 (AVX-512) or 8+8 (AVX2) lanes at a time; the portable path loops over the
// lanes with the shared scalar node hash. All paths give identical bytes (tests/kernels_simd_test).
//
// Layout: a group of 16 labels is 128 words, word w of lane l at [w * 16 + l].
#pragma once

#include <cstdint>

#include "kernels/label_format.h"

namespace wipeproof {

constexpr int kLanes = 16;
constexpr int kGroupWords = 8 * kLanes;  // words of one 16-label group

enum class SimdLevel : uint8_t { kPortable = 0, kAvx2 = 1, kAvx512 = 2 };

const char* SimdLevelName(SimdLevel level);
// Lanes hashed per instruction stream: 1, 8, 16.
int SimdLevelWidth(SimdLevel level);
// The widest level this CPU supports (cpuid), unless WIPEPROOF_SIMD=portable|avx2|avx512 lowers it.
SimdLevel BestSimdLevel();

// Block-0 chaining values of the 192 format (node_hash.h Block0ChainingValue192), cached for node
// numbers [0, nodes): 8 words per node, node-major. Seed-independent, so one cache serves a whole
// session. nullptr or a short cache means "compute it".
struct Cv0Table {
  const uint32_t* words = nullptr;
  uint64_t nodes = 0;
};

// Hashes nodes node_base .. node_base+15. Their message is pred0 = group `lo` and pred1 = group `hi`
// (nullptr: zeros); the 16 labels go to group `out`, which may alias lo or hi (every input is read
// before any output is written). All nodes are internal (not sources), as in every layer of >= 16.
using Hash16Fn = void (*)(const ChunkHashParams& params, const Cv0Table& cv0, const uint32_t* lo,
                          const uint32_t* hi, uint64_t node_base, uint32_t* out);

Hash16Fn SelectHash16(SimdLevel level);

void Hash16Portable(const ChunkHashParams&, const Cv0Table&, const uint32_t*, const uint32_t*, uint64_t, uint32_t*);
void Hash16Avx2(const ChunkHashParams&, const Cv0Table&, const uint32_t*, const uint32_t*, uint64_t, uint32_t*);
void Hash16Avx512(const ChunkHashParams&, const Cv0Table&, const uint32_t*, const uint32_t*, uint64_t, uint32_t*);

}  // namespace wipeproof

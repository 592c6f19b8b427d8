// Batch node hashing: 16 nodes with consecutive node numbers at once, in the engine's word-sliced
// ("SoA") label layout. Nodes of one graph layer are independent (graph_schedule.h), so the
// labeler hashes them 16 (AVX-512) or 8+8 (AVX2) lanes at a time; the portable path loops over the
// lanes with the shared scalar node hash. All paths give identical bytes (tests/kernels_simd_test).
//
// Layout: a group of 16 labels is 128 words, word w of lane l at [w * 16 + l].
#pragma once

#include <cstdint>

#include "kernels/label_spec.h"

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
// With pair_bit != 0 (a butterfly inside one group, pair_bit < 16), lane l reads
// pred0 = lo lane (l & ~pair_bit) and pred1 = lo lane (l | pair_bit); hi is ignored.
using Hash16Fn = void (*)(const ChunkHashParams& params, const Cv0Table& cv0, const uint32_t* lo,
                          const uint32_t* hi, uint32_t pair_bit, uint64_t node_base, uint32_t* out);

Hash16Fn SelectHash16(SimdLevel level);

void Hash16Portable(const ChunkHashParams&, const Cv0Table&, const uint32_t*, const uint32_t*, uint32_t, uint64_t,
                    uint32_t*);
void Hash16Avx2(const ChunkHashParams&, const Cv0Table&, const uint32_t*, const uint32_t*, uint32_t, uint64_t,
                uint32_t*);
void Hash16Avx512(const ChunkHashParams&, const Cv0Table&, const uint32_t*, const uint32_t*, uint32_t, uint64_t,
                  uint32_t*);

// Lane-per-chunk batches (chunk_batch_labeler.h): 16 chunks of one graph, lane l = chunk l.
struct ChunkBatchParams {
  LabelFormat format = LabelFormat::kC1;
  uint32_t key[8][kLanes];      // c1: each lane's chunk_key; 192: unused
  uint32_t block2[16][kLanes];  // 192: each lane's block 2 (chunk_seed || descriptor)
};

// Hashes node `node` of all 16 chunks: lane l reads pred0 = lo lane l and pred1 = hi lane l
// (nullptr: zeros) and writes out lane l (out may alias lo or hi). For 192, `cv0` is the node's
// block-0 chaining value, the same in every lane (ignored for c1).
using HashAcrossFn = void (*)(const ChunkBatchParams& params, const uint32_t cv0[8], const uint32_t* lo,
                              const uint32_t* hi, uint64_t node, uint32_t* out);

HashAcrossFn SelectHashAcross(SimdLevel level);

void HashAcrossPortable(const ChunkBatchParams&, const uint32_t*, const uint32_t*, const uint32_t*, uint64_t, uint32_t*);
void HashAcrossAvx2(const ChunkBatchParams&, const uint32_t*, const uint32_t*, const uint32_t*, uint64_t, uint32_t*);
void HashAcrossAvx512(const ChunkBatchParams&, const uint32_t*, const uint32_t*, const uint32_t*, uint64_t, uint32_t*);

}  // namespace wipeproof

// The two node-hash formats of label-spec.md (§4 posedb-blake3-c1, §5 posedb-blake3-192) and the
// per-chunk key material each one derives from the session seed.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/host_device.h"

namespace wipeproof {

constexpr int kSeedBytes = 32;  // session seed

enum class LabelFormat : uint8_t {
  kC1 = 0,   // posedb-blake3-c1: one compression per node (default)
  k192 = 1,  // posedb-blake3-192: PoSE-DB prototype's 192-byte keyed hash (2 compressions + a cacheable one)
};

// "posedb-blake3-c1" / "posedb-blake3-192".
const char* LabelFormatName(LabelFormat format);
// Parses a name above. Returns false for anything else.
bool ParseLabelFormat(const std::string& name, LabelFormat* out);

// Sequential compressions per node an attacker needs: 1 for c1, 2 for 192 (spec §5): c_node.
inline int SequentialCompressionsPerNode(LabelFormat format) { return format == LabelFormat::kC1 ? 1 : 2; }

// Everything a node hash needs for one chunk, derived once per chunk (host) and copied to devices.
struct ChunkHashParams {
  LabelFormat format;
  // c1: words of chunk_key(c). 192: words of context_key("pose-db/label/int").
  uint32_t key[8];
  // 192 only: words of context_key("pose-db/label/src").
  uint32_t src_key[8];
  // 192 only: block 2 = chunk_seed(c) || descriptor(m'), as 16 little-endian words.
  uint32_t block2[16];
};

// Derives the chunk's parameters (spec §4 chunk_key, §5 chunk_seed/descriptor). `graph_labels` is
// m for c1 and m' (the chunk's own graph size, < m only for a 192 trailing partial chunk) for 192.
ChunkHashParams DeriveChunkHashParams(LabelFormat format, const uint8_t seed[kSeedBytes], uint64_t chunk,
                                      uint32_t chunk_labels, uint32_t graph_labels);

}  // namespace wipeproof

// The facts of label-spec.md that every part of wipeproof shares, each stated once: label and seed
// sizes, the range of m, the two node-hash formats (§4 posedb-blake3-c1, §5 posedb-blake3-192),
// the BLAKE3 derive_key contexts, the per-chunk key material each format derives from the session
// seed, and the region a fill or a recomputation covers (§2: global label indices, chunks of m,
// the 192 trailing partial chunk). The label engine, the GPU kernels, the prover's backends and the
// challenger all take these from here; proto/label_wire.h maps them to and from the wire.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "kernels/host_device.h"

namespace wipeproof {

constexpr int kLabelBytes = 32;                           // one label (spec §1)
constexpr int kLabelWords = 8;                            // a label as 32-bit little-endian words
constexpr int kSeedBytes = 32;                            // session seed (spec §1)
constexpr uint32_t kMinChunkLabels = 1;                   // m, outputs of one chunk's graph (spec §2)
constexpr uint32_t kMaxChunkLabels = 1u << 20;            // largest m the spec allows
constexpr uint64_t kLabelIndexLimit = uint64_t{1} << 62;  // global indices stay below 2^62

// Whether m (labels per chunk) is in the spec's range [1, 2^20].
inline bool ChunkLabelsInRange(uint64_t m) { return m >= kMinChunkLabels && m <= kMaxChunkLabels; }

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

// The BLAKE3 derive_key contexts of spec §4 (c1) and §5 (192). The CPU derivation (label_spec.cc)
// and the GPU kernels' session constants (kernels/gpu/session_constants.cc) both use these.
inline constexpr char kC1ChunkKeyContext[] = "wipeproof/posedb-blake3-c1/chunk-key";
inline constexpr char k192ChunkSeedContext[] = "pose-db/chunk-seed";
inline constexpr char k192DescriptorContext[] = "pose-db/descriptor";
inline constexpr char k192SourceContext[] = "pose-db/label/src";
inline constexpr char k192InternalContext[] = "pose-db/label/int";
inline constexpr uint64_t k192LabelBits = 256;  // the descriptor's label size field (spec §5)

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

// The labels one fill, lookup or recomputation covers: global label indices [first, first + count)
// of one session (format, seed, m). A device holds its region at slots 0 .. count-1.
struct RegionSpec {
  LabelFormat format = LabelFormat::kC1;
  uint8_t seed[kSeedBytes] = {};
  uint32_t chunk_labels = 0;  // m, in [1, 2^20]
  uint64_t first = 0;         // first global label index
  uint64_t count = 0;         // labels in the region
};

// Validates a region: m in range, count >= 1, no overflow of the index space (2^62).
// Errors: INVALID_ARGUMENT naming the field.
Status ValidateRegion(const RegionSpec& region);

// The graph size of chunk `chunk` inside a region ending at `region_end` (spec §2): m for c1 (a
// partial chunk stores only the ranks it covers, so a label depends on (format, seed, m, g)
// alone); for 192 the region's trailing partial chunk of k < m labels is the graph for m' = k.
uint32_t GraphLabelsForChunk(LabelFormat format, uint32_t chunk_labels, uint64_t chunk, uint64_t region_end);

}  // namespace wipeproof

#include "kernels/gpu/session_constants.h"

#include "kernels/blake3_small.h"

namespace wipeproof {
namespace gpu {
namespace {
// Must equal the contexts of kernels/label_spec.cc; tests/kernels/gpu_kernel_logic_test.cc compares the
// device derivation with DeriveChunkHashParams for both formats.
constexpr char kC1ChunkKeyContext[] = "wipeproof/posedb-blake3-c1/chunk-key";
constexpr char k192ChunkSeedContext[] = "pose-db/chunk-seed";
}  // namespace

SessionConstants BuildSessionConstants(LabelFormat format, const uint8_t seed[kSeedBytes], uint32_t chunk_labels,
                                       uint32_t graph_labels) {
  SessionConstants s;
  s.format = static_cast<uint32_t>(format);
  s.chunk_labels = chunk_labels;
  for (int i = 0; i < 8; ++i) s.seed[i] = LoadLe32(seed + 4 * i);
  if (format == LabelFormat::kC1) {
    Blake3ContextKey(kC1ChunkKeyContext, sizeof kC1ChunkKeyContext - 1, s.chunk_context_key);
    return s;
  }
  Blake3ContextKey(k192ChunkSeedContext, sizeof k192ChunkSeedContext - 1, s.chunk_context_key);
  // Chunk 0's parameters carry everything that does not depend on the chunk.
  ChunkHashParams p = DeriveChunkHashParams(format, seed, 0, chunk_labels, graph_labels);
  for (int i = 0; i < 8; ++i) {
    s.int_key[i] = p.key[i];
    s.src_key[i] = p.src_key[i];
    s.descriptor[i] = p.block2[8 + i];
  }
  return s;
}

}  // namespace gpu
}  // namespace wipeproof

// Compiled with -mavx2 (kernels/CMakeLists.txt); only called when the CPU reports AVX2.
#include "kernels/simd/hash16_vector_impl.h"

namespace wipeproof {
void Hash16Avx2(const ChunkHashParams& p, const Cv0Table& t, const uint32_t* lo, const uint32_t* hi, uint32_t pair_bit,
              uint64_t base, uint32_t* out) {
  Hash16Vector(p, t, lo, hi, pair_bit, base, out);
}
void HashAcrossAvx2(const ChunkBatchParams& p, const uint32_t* cv0, const uint32_t* lo, const uint32_t* hi,
                  uint64_t node, uint32_t* out) {
  HashAcrossVector(p, cv0, lo, hi, node, out);
}
}  // namespace wipeproof

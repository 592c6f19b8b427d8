// Compiled with -mavx2 (kernels/CMakeLists.txt); only called when the CPU reports AVX2.
#include "kernels/simd/hash16_vector_impl.h"

namespace wipeproof {
void Hash16Avx2(const ChunkHashParams& p, const Cv0Table& t, const uint32_t* lo, const uint32_t* hi, uint64_t base,
                uint32_t* out) {
  Hash16Vector(p, t, lo, hi, base, out);
}
}  // namespace wipeproof

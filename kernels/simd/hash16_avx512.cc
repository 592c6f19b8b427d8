// Compiled with -mavx512f (kernels/CMakeLists.txt); only called when the CPU reports AVX-512F.
#include "kernels/simd/hash16_vector_impl.h"

namespace wipeproof {
void Hash16Avx512(const ChunkHashParams& p, const Cv0Table& t, const uint32_t* lo, const uint32_t* hi, uint64_t base,
                  uint32_t* out) {
  Hash16Vector(p, t, lo, hi, base, out);
}
}  // namespace wipeproof

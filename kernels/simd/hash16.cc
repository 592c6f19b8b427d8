// Portable batch hashing (the scalar node hash per lane) and run-time ISA selection.
#include "kernels/simd/hash16.h"

#include <cstdlib>
#include <cstring>

#include "kernels/node_hash.h"

namespace wipeproof {

const char* SimdLevelName(SimdLevel level) {
  switch (level) {
    case SimdLevel::kAvx512: return "avx512";
    case SimdLevel::kAvx2: return "avx2";
    default: return "portable";
  }
}

int SimdLevelWidth(SimdLevel level) {
  return level == SimdLevel::kAvx512 ? 16 : level == SimdLevel::kAvx2 ? 8 : 1;
}

SimdLevel BestSimdLevel() {
  SimdLevel best = SimdLevel::kPortable;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2")) best = SimdLevel::kAvx2;
  if (__builtin_cpu_supports("avx512f")) best = SimdLevel::kAvx512;
#endif
  if (const char* cap = std::getenv("WIPEPROOF_SIMD")) {
    SimdLevel limit = std::strcmp(cap, "portable") == 0 ? SimdLevel::kPortable
                      : std::strcmp(cap, "avx2") == 0   ? SimdLevel::kAvx2
                                                        : SimdLevel::kAvx512;
    if (limit < best) best = limit;
  }
  return best;
}

HashAcrossFn SelectHashAcross(SimdLevel level) {
#if defined(WIPEPROOF_HAVE_X86_SIMD)
  if (level == SimdLevel::kAvx512) return HashAcrossAvx512;
  if (level == SimdLevel::kAvx2) return HashAcrossAvx2;
#endif
  (void)level;
  return HashAcrossPortable;
}

Hash16Fn SelectHash16(SimdLevel level) {
#if defined(WIPEPROOF_HAVE_X86_SIMD)
  if (level == SimdLevel::kAvx512) return Hash16Avx512;
  if (level == SimdLevel::kAvx2) return Hash16Avx2;
#endif
  (void)level;
  return Hash16Portable;
}

void Hash16Portable(const ChunkHashParams& params, const Cv0Table& cv0_table, const uint32_t* lo, const uint32_t* hi,
                    uint32_t pair_bit, uint64_t node_base, uint32_t* out) {
  uint32_t result[8][kLanes];
  for (int l = 0; l < kLanes; ++l) {
    uint32_t p0[8], p1[8], label[8];
    for (int w = 0; w < 8; ++w) {
      if (pair_bit != 0) {
        p0[w] = lo[w * kLanes + (l & ~static_cast<int>(pair_bit))];
        p1[w] = lo[w * kLanes + (l | static_cast<int>(pair_bit))];
      } else {
        p0[w] = lo[w * kLanes + l];
        p1[w] = hi ? hi[w * kLanes + l] : 0;
      }
    }
    uint64_t node = node_base + l;
    if (params.format == LabelFormat::kC1) {
      NodeHashC1(params.key, node, p0, p1, label);
    } else {
      uint32_t cv0[8];
      if (node < cv0_table.nodes) {
        std::memcpy(cv0, cv0_table.words + node * 8, sizeof cv0);
      } else {
        Block0ChainingValue192(params.key, node, cv0);
      }
      NodeHash192FromCv0(cv0, p0, p1, params.block2, label);
    }
    for (int w = 0; w < 8; ++w) result[w][l] = label[w];
  }
  std::memcpy(out, result, sizeof result);
}

void HashAcrossPortable(const ChunkBatchParams& params, const uint32_t* cv0, const uint32_t* lo, const uint32_t* hi,
                        uint64_t node, uint32_t* out) {
  uint32_t result[8][kLanes];
  for (int l = 0; l < kLanes; ++l) {
    uint32_t p0[8], p1[8], label[8];
    for (int w = 0; w < 8; ++w) {
      p0[w] = lo[w * kLanes + l];
      p1[w] = hi ? hi[w * kLanes + l] : 0;
    }
    if (params.format == LabelFormat::kC1) {
      uint32_t key[8];
      for (int w = 0; w < 8; ++w) key[w] = params.key[w][l];
      NodeHashC1(key, node, p0, p1, label);
    } else {
      uint32_t block2[16];
      for (int w = 0; w < 16; ++w) block2[w] = params.block2[w][l];
      NodeHash192FromCv0(cv0, p0, p1, block2, label);
    }
    for (int w = 0; w < 8; ++w) result[w][l] = label[w];
  }
  std::memcpy(out, result, sizeof result);
}

}  // namespace wipeproof

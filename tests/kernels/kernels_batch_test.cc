// The lane-per-chunk batch labeler against the single-chunk labeler (the SIMD-across-a-layer path
// that the known-answer tests pin down): same bytes for both formats, odd m, partial rank windows,
// idle lanes, and every SIMD level this CPU has.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/chunk_batch_labeler.h"
#include "kernels/chunk_labeler.h"
#include "kernels/cv0_cache.h"

namespace wipeproof {
namespace {

void ExpectBatchMatchesSingle(LabelFormat format, uint32_t m, int count, SimdLevel simd) {
  SCOPED_TRACE(std::string(LabelFormatName(format)) + " m=" + std::to_string(m) + " chunks=" +
               std::to_string(count) + " simd=" + SimdLevelName(simd));
  uint8_t seed[kSeedBytes];
  for (int i = 0; i < kSeedBytes; ++i) seed[i] = static_cast<uint8_t>(i * 13 + 5);
  Cv0Table cv0 = format == LabelFormat::k192 ? Cv0TableFor(m) : Cv0Table{};
  std::vector<std::vector<uint8_t>> got(count, std::vector<uint8_t>(m * 32, 0));
  ChunkBatchLabeler::Chunk chunks[ChunkBatchLabeler::kMaxChunks];
  for (int l = 0; l < count; ++l) {
    chunks[l].params = DeriveChunkHashParams(format, seed, 1000 + 7 * l, m, m);
    // Lane-dependent windows: full, a prefix, a suffix, a middle slice.
    chunks[l].rank_begin = (l % 4 == 2 || l % 4 == 3) ? m / 3 : 0;
    chunks[l].rank_end = (l % 4 == 1 || l % 4 == 3) ? m - m / 4 : m;
    if (chunks[l].rank_end <= chunks[l].rank_begin) chunks[l].rank_end = chunks[l].rank_begin + 1;
    chunks[l].out = got[l].data();
  }
  ChunkBatchLabeler batch(simd, cv0);
  batch.Label(m, chunks, count);
  ChunkLabeler single;  // best SIMD level; pinned to the known answers by kernels_labels_test
  for (int l = 0; l < count; ++l) {
    std::vector<uint8_t> want(m * 32);
    single.Label(chunks[l].params, m, 0, m, want.data());
    uint32_t n = chunks[l].rank_end - chunks[l].rank_begin;
    EXPECT_EQ(0, std::memcmp(got[l].data(), want.data() + chunks[l].rank_begin * 32, n * 32)) << "lane " << l;
  }
}

TEST(ChunkBatchLabeler, MatchesSingleChunkLabeler) {
  std::vector<SimdLevel> levels = {SimdLevel::kPortable};
  if (BestSimdLevel() >= SimdLevel::kAvx2) levels.push_back(SimdLevel::kAvx2);
  if (BestSimdLevel() >= SimdLevel::kAvx512) levels.push_back(SimdLevel::kAvx512);
  for (SimdLevel simd : levels) {
    for (LabelFormat format : {LabelFormat::kC1, LabelFormat::k192}) {
      for (uint32_t m : {1u, 3u, 17u, 1000u}) ExpectBatchMatchesSingle(format, m, 16, simd);
      ExpectBatchMatchesSingle(format, 4096, 5, simd);  // idle lanes
    }
  }
}

}  // namespace
}  // namespace wipeproof

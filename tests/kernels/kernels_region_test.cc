// Region labeling: equal bytes across thread counts, range splits (c1), SIMD levels, and the
// 192 trailing-partial-chunk rule (label-spec.md §2).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "common/hex.h"
#include "kernels/chunk_verifier.h"
#include "kernels/region_labeler.h"

namespace wipeproof {
namespace {

RegionSpec Spec(LabelFormat format, uint32_t m, uint64_t first, uint64_t count) {
  RegionSpec spec;
  spec.format = format;
  for (int i = 0; i < kSeedBytes; ++i) spec.seed[i] = static_cast<uint8_t>(0xA0 ^ i);
  spec.chunk_labels = m;
  spec.first = first;
  spec.count = count;
  return spec;
}

std::vector<uint8_t> Label(const RegionSpec& spec, int threads, SimdLevel simd = BestSimdLevel()) {
  std::vector<uint8_t> out(spec.count * 32, 0xEE);
  RegionLabelOptions options;
  options.threads = threads;
  options.simd = simd;
  EXPECT_TRUE(LabelRegion(spec, out.data(), options).ok());
  return out;
}

TEST(RegionLabeler, SameBytesForAnyThreadCount) {
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192}) {
    RegionSpec spec = Spec(f, 256, 512, 256 * 9 + 37);
    std::vector<uint8_t> one = Label(spec, 1);
    EXPECT_EQ(one, Label(spec, 2));
    EXPECT_EQ(one, Label(spec, 5));
  }
}

TEST(RegionLabeler, C1LabelsDependOnlyOnGlobalIndex) {
  RegionSpec whole = Spec(LabelFormat::kC1, 1000, 0, 5000);
  std::vector<uint8_t> all = Label(whole, 2);
  // Splits that start and end inside chunks.
  for (auto [first, count] : {std::pair<uint64_t, uint64_t>{1, 998}, {999, 2}, {1500, 3333}, {4999, 1}}) {
    std::vector<uint8_t> part = Label(Spec(LabelFormat::kC1, 1000, first, count), 2);
    EXPECT_EQ(0, std::memcmp(part.data(), all.data() + first * 32, count * 32)) << first << "+" << count;
  }
}

TEST(RegionLabeler, EverySimdLevelGivesTheSameBytes) {
  SimdLevel best = BestSimdLevel();
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192}) {
    RegionSpec spec = Spec(f, 4096, 4096, 4096 + 100);
    std::vector<uint8_t> portable = Label(spec, 2, SimdLevel::kPortable);
    if (best >= SimdLevel::kAvx2) EXPECT_EQ(portable, Label(spec, 2, SimdLevel::kAvx2));
    if (best >= SimdLevel::kAvx512) EXPECT_EQ(portable, Label(spec, 2, SimdLevel::kAvx512));
  }
}

TEST(RegionLabeler, Format192TrailingPartialChunkUsesItsOwnGraph) {
  // 2 whole chunks + 17 labels: the last 17 are the graph for m' = 17 (spec §2), so they differ
  // from the first 17 ranks of the full-m chunk at the same place.
  RegionSpec region = Spec(LabelFormat::k192, 64, 0, 64 * 2 + 17);
  std::vector<uint8_t> labels = Label(region, 2);
  RegionSpec longer = Spec(LabelFormat::k192, 64, 0, 64 * 3);
  std::vector<uint8_t> full = Label(longer, 2);
  EXPECT_EQ(0, std::memcmp(labels.data(), full.data(), 128 * 32));
  EXPECT_NE(0, std::memcmp(labels.data() + 128 * 32, full.data() + 128 * 32, 17 * 32));
  auto partial = RecomputeChunk(LabelFormat::k192, region.seed, 64, 2, region.first + region.count);
  ASSERT_TRUE(partial.ok());
  EXPECT_EQ(partial->graph_labels, 17u);
  EXPECT_EQ(0, std::memcmp(partial->labels.data(), labels.data() + 128 * 32, 17 * 32));
}

TEST(ChunkVerifier, RecomputeMatchesRegion) {
  RegionSpec spec = Spec(LabelFormat::kC1, 1024, 3 * 1024, 2048);
  std::vector<uint8_t> labels = Label(spec, 2);
  auto chunk = RecomputeChunk(LabelFormat::kC1, spec.seed, 1024, 4, 1ull << 40);
  ASSERT_TRUE(chunk.ok());
  EXPECT_EQ(chunk->first_label, 4096u);
  EXPECT_EQ(0, std::memcmp(chunk->labels.data(), labels.data() + 1024 * 32, 1024 * 32));
}

TEST(ChunkVerifier, RecomputeLabelsAtScatteredIndices) {
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192}) {
    RegionSpec spec = Spec(f, 64, 640, 64 * 40 + 9);  // 192: a trailing partial chunk of 9
    std::vector<uint8_t> labels = Label(spec, 2);
    std::vector<uint64_t> indices;
    for (uint64_t k = 0; k < 60; ++k) indices.push_back(spec.first + (k * 2654435761u) % spec.count);
    indices.push_back(spec.first + spec.count - 1);  // inside the partial chunk
    indices.push_back(indices[3]);                  // a repeat
    std::vector<uint8_t> got(indices.size() * 32);
    ASSERT_TRUE(RecomputeLabels(spec, indices.data(), indices.size(), got.data(), 2).ok());
    for (size_t i = 0; i < indices.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(got.data() + i * 32, labels.data() + (indices[i] - spec.first) * 32, 32))
          << LabelFormatName(f) << " index " << indices[i];
    }
    uint64_t outside = spec.first + spec.count;
    EXPECT_EQ(RecomputeLabels(spec, &outside, 1, got.data()).code(), StatusCode::kInvalidArgument);
  }
}

TEST(RegionLabeler, RejectsBadRegions) {
  std::vector<uint8_t> out(32);
  EXPECT_EQ(LabelRegion(Spec(LabelFormat::kC1, 0, 0, 1), out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LabelRegion(Spec(LabelFormat::kC1, (1u << 20) + 1, 0, 1), out.data()).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(LabelRegion(Spec(LabelFormat::kC1, 16, 0, 0), out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(LabelRegion(Spec(LabelFormat::kC1, 16, ~0ull - 3, 8), out.data()).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(RecomputeChunk(LabelFormat::kC1, out.data(), 16, 10, 16 * 10).ok());
}

TEST(RegionLabeler, CancelStopsWithAStatus) {
  std::atomic<bool> cancel{true};
  RegionSpec spec = Spec(LabelFormat::kC1, 64, 0, 64 * 100);
  std::vector<uint8_t> out(spec.count * 32);
  RegionLabelOptions options;
  options.cancel = &cancel;
  Status s = LabelRegion(spec, out.data(), options);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace wipeproof

// The GPU kernels on a real device (CUDA or HIP, chosen at build time: WP_TEST_HIP), compared
// byte for byte with the CPU engine: both formats, m in {1, 3, 1000, 4096, 2^14, 2^17}, partial
// chunks, ranges crossing allocation boundaries, scratch teams and 192 deferred chunks, a fill of
// (nearly) all free memory with sampled parity, and lookups. Every test GTEST_SKIPs when no
// device is present.
// wipeproof-gpu-check runs the same cases in the minimal build.
#include <gtest/gtest.h>

#include <random>

#include "kernels/chunk_verifier.h"
#include "kernels/gpu/gpu_runtime.h"
#include "prover/backends/gpu/device_region.h"
#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace gpu {
namespace {

using testing::Reference;
using testing::Spec;

class GpuDevice : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(WP_TEST_HIP)
    runtime_ = MakeHipRuntime();
#else
    runtime_ = MakeCudaRuntime();
#endif
    int count = 0;
    Status st = runtime_->DeviceCount(&count);
    if (!st.ok() || count == 0) {
      GTEST_SKIP() << "no " << runtime_->name() << " device: " << (st.ok() ? "count 0" : st.ToString());
    }
  }
  std::unique_ptr<GpuRuntime> runtime_;
};

struct Case {
  LabelFormat format;
  uint32_t m;
  uint64_t first, count;
  uint64_t piece_bytes;
};

void CheckParity(GpuRuntime* runtime, const Case& c, FillTuning tuning = {}) {
  const RegionSpec spec = Spec(c.format, c.m, c.first, c.count);
  DeviceRegionOptions options;
  options.bytes = c.count * 32;
  options.policy.max_piece_bytes = c.piece_bytes;
  options.policy.min_piece_bytes = 4096;
  options.policy.granularity_bytes = 4096;
  auto region = DeviceRegion::Acquire(runtime, 0, options);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  FillStats stats;
  Status st = (*region)->Fill(spec, tuning, {}, &stats);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<uint64_t> idx(c.count);
  for (uint64_t i = 0; i < c.count; ++i) idx[i] = c.first + i;
  std::vector<uint8_t> got(c.count * 32);
  ASSERT_TRUE((*region)->Lookup(idx.data(), idx.size(), got.data()).ok());
  const std::vector<uint8_t> want = Reference(spec);
  for (uint64_t i = 0; i < c.count; ++i) {
    ASSERT_EQ(0, std::memcmp(want.data() + i * 32, got.data() + i * 32, 32))
        << LabelFormatName(c.format) << " m=" << c.m << ": first differing label " << c.first + i << "\n"
        << stats.plan;
  }
}

TEST_F(GpuDevice, ParityBothFormatsAllSizes) {
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192}) {
    for (uint32_t m : {1u, 3u, 1000u, 4096u, 1u << 14, 1u << 17}) {
      const uint64_t first = f == LabelFormat::kC1 ? 3ull * m + m / 2 : 3ull * m;
      const uint64_t chunks = m >= (1u << 17) ? 1 : m >= (1u << 14) ? 3 : 9;
      const uint64_t count = chunks * m + m / 3 + 1;
      CheckParity(runtime_.get(), {f, m, first, count, std::max<uint64_t>(8192, count * 32 / 5 / 4096 * 4096)});
    }
  }
}

TEST_F(GpuDevice, EvenWavesScratchTeamsAndDeferredChunks) {
  FillTuning tuning;
  tuning.side_scratch_bytes = 2 << 20;  // 192: the block-0 table goes to the region top
  tuning.max_wave_chunks = 37;          // several waves, teams of C and C + 1
  for (LabelFormat f : {LabelFormat::kC1, LabelFormat::k192}) {
    CheckParity(runtime_.get(), {f, 4096, 4096, 4096ull * 200 + 77, 4 << 20}, tuning);
    tuning.in_place = false;
    CheckParity(runtime_.get(), {f, 1000, 1000, 1000ull * 90 + 5, 1 << 20}, tuning);
    tuning.in_place = true;
  }
}

TEST_F(GpuDevice, FullMemoryFillWithSampledParityAndLookups) {
  DeviceRegionOptions options;  // all free memory but the reserve
  auto region = DeviceRegion::Acquire(runtime_.get(), 0, options);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  const uint32_t m = 1u << 14;
  const uint64_t count = (*region)->label_capacity();
  const RegionSpec spec = Spec(LabelFormat::kC1, m, static_cast<uint64_t>(m) * 77, count);
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, {}, {}, &stats).ok());
  std::mt19937_64 rng(11);
  std::vector<uint64_t> idx = {spec.first, spec.first + count - 1};
  for (int i = 0; i < 14; ++i) idx.push_back(spec.first + rng() % count);
  std::vector<uint8_t> got(idx.size() * 32);
  ASSERT_TRUE((*region)->Lookup(idx.data(), idx.size(), got.data()).ok());
  for (size_t i = 0; i < idx.size(); ++i) {
    auto chunk = RecomputeChunk(spec.format, spec.seed, m, idx[i] / m, spec.first + count);
    ASSERT_TRUE(chunk.ok());
    EXPECT_EQ(0, std::memcmp(got.data() + i * 32, chunk->labels.data() + (idx[i] % m) * 32, 32)) << idx[i];
  }
  const uint64_t outside = spec.first + count;
  EXPECT_EQ((*region)->Lookup(&outside, 1, got.data()).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof

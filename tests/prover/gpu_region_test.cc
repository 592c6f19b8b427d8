// DeviceRegion (the GPU backends' acquisition, fill passes and lookup) on the CPU-emulated runtime:
// the same driver code the CUDA and HIP backends run, with allocations that back off, regions that
// cross allocation boundaries, partial chunks, scratch in the region tail, failures and release.
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "kernels/chunk_verifier.h"
#include "kernels/gpu/emulated_runtime.h"
#include "prover/backends/gpu/device_region.h"
#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace gpu {
namespace {

using testing::Reference;
using testing::Spec;

EmulatedGpuConfig SmallGpu(uint64_t total_mib = 64, uint64_t max_allocation_kib = 0) {
  EmulatedGpuConfig c;
  c.total_bytes = total_mib << 20;
  c.runtime_overhead_bytes = 1 << 20;
  c.max_allocation_bytes = max_allocation_kib << 10;
  c.multiprocessors = 2;
  return c;
}

// Small pieces, so that regions cross allocation boundaries (and a chunk's outputs span pieces).
DeviceRegionOptions Pieces(uint64_t bytes, uint64_t piece_bytes) {
  DeviceRegionOptions o;
  o.bytes = bytes;
  o.policy.max_piece_bytes = piece_bytes;
  o.policy.min_piece_bytes = 4096;
  o.policy.granularity_bytes = 4096;
  return o;
}

FillTuning SmallTuning() {
  FillTuning t;
  t.target_threads = 256;
  t.side_scratch_bytes = 1 << 20;
  t.max_region_scratch_bytes = 4 << 20;
  return t;
}

std::vector<uint8_t> LookupRange(const DeviceRegion& region, uint64_t first, uint64_t count) {
  std::vector<uint64_t> idx(count);
  for (uint64_t i = 0; i < count; ++i) idx[i] = first + i;
  std::vector<uint8_t> out(count * 32);
  EXPECT_TRUE(region.Lookup(idx.data(), idx.size(), out.data()).ok());
  return out;
}

struct RegionCase {
  LabelFormat format;
  uint32_t m;
  uint64_t first, count;
  uint64_t piece_bytes;
};

class RegionParity : public ::testing::TestWithParam<RegionCase> {};

TEST_P(RegionParity, FillThenLookupEqualsTheCpuEngine) {
  const RegionCase c = GetParam();
  EmulatedRuntime runtime(SmallGpu());
  const RegionSpec spec = Spec(c.format, c.m, c.first, c.count);
  // Room for the plan plus a little: the tail passes must cope with what the plan leaves.
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces((c.count + 100) * 32, c.piece_bytes));
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  FillStats stats;
  uint64_t last_progress = 0;
  FillControl control;
  control.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_GE(done, last_progress);
    EXPECT_EQ(total, c.count);
    last_progress = done;
  };
  Status st = (*region)->Fill(spec, SmallTuning(), control, &stats);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(last_progress, c.count);
  EXPECT_EQ(stats.labels, c.count);
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  const std::vector<uint8_t> want = Reference(spec);
  const std::vector<uint8_t> got = LookupRange(**region, c.first, c.count);
  for (uint64_t i = 0; i < c.count; ++i) {
    ASSERT_EQ(0, std::memcmp(want.data() + i * 32, got.data() + i * 32, 32))
        << "first differing label " << c.first + i << "\n"
        << stats.plan;
  }
  (*region)->Release();
  EXPECT_EQ(runtime.live_allocations(), 0);
  EXPECT_EQ(runtime.live_mapped_host(), 0);
}

INSTANTIATE_TEST_SUITE_P(Cases, RegionParity,
                         ::testing::Values(RegionCase{LabelFormat::kC1, 1, 3, 50, 4096},
                                           RegionCase{LabelFormat::k192, 1, 3, 50, 4096},
                                           RegionCase{LabelFormat::kC1, 3, 2, 100, 4096},
                                           RegionCase{LabelFormat::k192, 3, 0, 101, 4096},
                                           RegionCase{LabelFormat::kC1, 1000, 500, 20000, 8192},
                                           RegionCase{LabelFormat::k192, 1000, 2000, 20500, 12288},
                                           RegionCase{LabelFormat::kC1, 4096, 4096 * 5 + 1, 4096 * 6, 40960},
                                           RegionCase{LabelFormat::k192, 4096, 4096 * 2, 4096 * 5 + 77, 65536}));

TEST(DeviceRegion, MainPassesKeepScratchInTheRegionTail) {
  EmulatedRuntime runtime(SmallGpu(96));
  const RegionSpec spec = Spec(LabelFormat::kC1, 256, 0, 256 * 600);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 256 * 1024));
  ASSERT_TRUE(region.ok());
  FillTuning t = SmallTuning();
  t.side_scratch_bytes = 64 * 1024;  // a few chunks' scratch: the final pass only
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
  EXPECT_GE(stats.passes, 3u) << stats.plan;
  EXPECT_GT(stats.region_scratch_peak_bytes, stats.side_scratch_bytes) << stats.plan;
  EXPECT_NE(stats.plan.find("region-tail pass"), std::string::npos);
  EXPECT_NE(stats.plan.find("side-scratch pass"), std::string::npos);
  EXPECT_EQ(Reference(spec), LookupRange(**region, 0, spec.count)) << stats.plan;
}

TEST(DeviceRegion, Format192UsesABlock0TableInTheRegionTail) {
  EmulatedRuntime runtime(SmallGpu(96));
  const RegionSpec spec = Spec(LabelFormat::k192, 32, 32, 32 * 2000);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 1 << 20));
  ASSERT_TRUE(region.ok());
  FillTuning t = SmallTuning();
  t.side_scratch_bytes = 96 * 1024;
  t.cv0_side_max_bytes = 32 * 100;  // the side table covers 100 nodes; the tail holds all
  t.shared_scratch = false;
  t.preferred_threads_per_chunk = 1;  // a large in-region scratch
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
  EXPECT_GT(stats.cv0_table_nodes, 100u) << stats.plan;
  EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count));
}

TEST(DeviceRegion, SharedMemoryScratchForTinyChunks) {
  EmulatedRuntime runtime(SmallGpu());
  const RegionSpec spec = Spec(LabelFormat::kC1, 64, 10, 64 * 50);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 8192));
  ASSERT_TRUE(region.ok());
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, SmallTuning(), {}, &stats).ok());
  EXPECT_NE(stats.plan.find("shared-memory pass"), std::string::npos) << stats.plan;
  EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count));
}

TEST(DeviceRegion, ReverseThreadOrderAndOnlySideScratchGiveTheSameBytes) {
  EmulatedGpuConfig config = SmallGpu();
  config.order = EmulatedThreadOrder::kReverse;
  EmulatedRuntime runtime(config);
  const RegionSpec spec = Spec(LabelFormat::k192, 500, 250, 500 * 9 + 10);
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(spec.count * 32, 8192));
  ASSERT_TRUE(region.ok());
  FillTuning t = SmallTuning();
  t.in_region_scratch = false;
  t.threads_per_chunk = 3;
  t.team_threads = 9;
  ASSERT_TRUE((*region)->Fill(spec, t).ok());
  EXPECT_EQ(Reference(spec), LookupRange(**region, spec.first, spec.count));
}

TEST(DeviceRegion, TakesAllFreeMemoryButTheReserveWithBackOff) {
  // 96 MiB device, no allocation above 5 MiB: pieces back off, and the reserve stays free.
  EmulatedRuntime runtime(SmallGpu(1024, 5 * 1024));
  DeviceRegionOptions o;
  o.reserve_bytes = 0;  // raised to kMinReserveBytes (512 MiB)
  o.policy.max_piece_bytes = 64 << 20;
  o.policy.min_piece_bytes = 1 << 20;
  o.policy.granularity_bytes = 1 << 20;
  auto region = DeviceRegion::Acquire(&runtime, 0, o);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  EXPECT_EQ((*region)->free_after_bytes(), kMinReserveBytes);
  EXPECT_GT((*region)->pieces().size(), 50u);
  for (const auto& p : (*region)->pieces()) EXPECT_LE(p.bytes, 5u << 20);
  // A fill at a small m (emulated kernels are slow: not all of it), sampled against the verifier.
  const uint64_t count = 2048 * 24;
  const RegionSpec spec = Spec(LabelFormat::kC1, 2048, 2048 * 1000 + 7, count);
  FillTuning t;
  t.target_threads = 512;
  t.side_scratch_bytes = 8 << 20;
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(spec, t, {}, &stats).ok());
  std::mt19937_64 rng(3);
  for (int i = 0; i < 6; ++i) {
    const uint64_t g = spec.first + (i == 0 ? count - 1 : rng() % count);
    auto chunk = RecomputeChunk(spec.format, spec.seed, spec.chunk_labels, g / 2048, spec.first + count);
    ASSERT_TRUE(chunk.ok());
    uint8_t got[32];
    ASSERT_TRUE((*region)->Lookup(&g, 1, got).ok());
    EXPECT_EQ(0, std::memcmp(got, chunk->labels.data() + (g % 2048) * 32, 32)) << "label " << g;
  }
}

TEST(DeviceRegion, ErrorsAreStatusesAndNothingLeaks) {
  EmulatedRuntime runtime(SmallGpu());
  {
    // More than the device has.
    auto too_big = DeviceRegion::Acquire(&runtime, 0, Pieces(200 << 20, 1 << 20));
    EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
    EXPECT_EQ(runtime.live_allocations(), 0);
  }
  {
    EmulatedGpuConfig config = SmallGpu();
    config.fail_allocation_number = 2;  // two pieces, then an error
    EmulatedRuntime failing(config);
    auto broken = DeviceRegion::Acquire(&failing, 0, Pieces(8 << 20, 1 << 20));
    EXPECT_EQ(broken.status().code(), StatusCode::kInternal);
    EXPECT_EQ(failing.live_allocations(), 0);
    EXPECT_EQ(failing.live_mapped_host(), 0);
  }
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(1 << 20, 1 << 18));
  ASSERT_TRUE(region.ok());
  uint64_t g = 5;
  uint8_t out[32];
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);  // before a fill
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 16, 0, (1 << 20) / 32 + 1)).code(),
            StatusCode::kInvalidArgument);  // more labels than capacity
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 0, 0, 10)).code(), StatusCode::kInvalidArgument);
  // Cancelled: FAILED_PRECONDITION, and lookups refuse the partial fill.
  std::atomic<bool> cancel{true};
  FillControl control;
  control.cancel = &cancel;
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 16, 0, 1000), SmallTuning(), control).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);
  // A good fill, then an index outside it.
  ASSERT_TRUE((*region)->Fill(Spec(LabelFormat::kC1, 16, 100, 1000), SmallTuning()).ok());
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  g = 99;
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kInvalidArgument);
  g = 1100;
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kInvalidArgument);
  g = 1099;
  EXPECT_TRUE((*region)->Lookup(&g, 1, out).ok());
  (*region)->Release();
  (*region)->Release();  // idempotent
  EXPECT_EQ((*region)->Lookup(&g, 1, out).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ((*region)->Fill(Spec(LabelFormat::kC1, 16, 0, 10)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(runtime.live_allocations(), 0);
  EXPECT_EQ(runtime.live_mapped_host(), 0);
}

TEST(DeviceRegion, SideScratchIsFreedAfterTheFill) {
  EmulatedRuntime runtime(SmallGpu());
  auto region = DeviceRegion::Acquire(&runtime, 0, Pieces(4 << 20, 1 << 20));
  ASSERT_TRUE(region.ok());
  const uint64_t before = runtime.allocated_bytes();
  EXPECT_EQ((*region)->scratch_bytes(), 0u);  // nothing outside the pieces between fills
  uint64_t during = 0;
  FillControl control;
  control.progress = [&](uint64_t, uint64_t) { during = std::max(during, (*region)->scratch_bytes()); };
  FillStats stats;
  ASSERT_TRUE((*region)->Fill(Spec(LabelFormat::kC1, 1024, 0, (4 << 20) / 32), SmallTuning(), control, &stats).ok());
  EXPECT_EQ(during, stats.side_scratch_bytes);
  EXPECT_LE(stats.side_scratch_bytes, SmallTuning().side_scratch_bytes);
  EXPECT_EQ((*region)->scratch_bytes(), 0u);
  EXPECT_EQ(runtime.allocated_bytes(), before);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof

// The GPU Backend (prover/backends/gpu/gpu_backend.h) through the generic Backend interface, over the
// CPU-emulated runtime: enumeration, acquisition, fill with progress, lookup, release, and the
// extras `bench` reads (raw compression rate, fill details).
#include "prover/backends/gpu/gpu_backend.h"

#include <gtest/gtest.h>

#include <cstring>

#include "kernels/gpu/emulated_runtime.h"
#include "prover/backends/gpu/gpu_host_fill.h"
#include "prover/backends/gpu/gpu_runtimes.h"
#include "tests/support/gpu_test_util.h"

namespace wipeproof {
namespace {

std::unique_ptr<gpu::GpuRuntime> Emulated(int devices = 2) {
  gpu::EmulatedGpuConfig c;
  c.devices = devices;
  c.total_bytes = 1ull << 30;
  c.multiprocessors = 2;
  return std::make_unique<gpu::EmulatedRuntime>(c);
}

GpuBackendConfig SmallConfig() {
  GpuBackendConfig config;
  config.tuning.target_threads = 256;
  config.tuning.side_scratch_bytes = 1 << 20;
  config.policy.max_piece_bytes = 64 * 1024;
  config.policy.min_piece_bytes = 4096;
  config.policy.granularity_bytes = 4096;
  return config;
}

TEST(GpuBackend, EnumeratesAcquiresFillsAndLooksUp) {
  auto backend = StartGpuBackend(DeviceKind::kCuda, Emulated(), SmallConfig());
  ASSERT_TRUE(backend.ok()) << backend.status().ToString();
  auto devices = (*backend)->Devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[1].id, "EMU-1");
  EXPECT_EQ(devices[0].kind, DeviceKind::kCuda);
  EXPECT_EQ(devices[0].total_bytes, 1ull << 30);
  const uint64_t others_before = devices[1].held_by_others_bytes;

  AcquireOptions acquire;
  acquire.bytes = 1000 * 40 * 32 + 5000;
  auto memory = (*backend)->Acquire("EMU-1", acquire);
  ASSERT_TRUE(memory.ok()) << memory.status().ToString();
  EXPECT_EQ((*memory)->bytes_held(), acquire.bytes);
  EXPECT_EQ((*memory)->device().id, "EMU-1");
  // What this backend holds is not "held by others".
  EXPECT_EQ((*backend)->Devices()[1].held_by_others_bytes, others_before);

  RegionSpec plan;
  plan.format = LabelFormat::k192;
  for (int i = 0; i < kSeedBytes; ++i) plan.seed[i] = static_cast<uint8_t>(i);
  plan.chunk_labels = 1000;
  plan.first = 7000;
  plan.count = 1000 * 40;
  uint64_t last = 0;
  FillOptions options;
  options.progress = [&](uint64_t done, uint64_t total) {
    EXPECT_EQ(total, plan.count);
    last = done;
  };
  ASSERT_TRUE((*memory)->Fill(plan, options).ok());
  EXPECT_EQ(last, plan.count);
  EXPECT_EQ((*memory)->scratch_bytes(), 0u);
  EXPECT_NE((*memory)->FillDetailsJson().find("\"passes\""), std::string::npos);

  RegionSpec spec = gpu::testing::Spec(plan.format, plan.chunk_labels, plan.first, plan.count);
  std::memcpy(spec.seed, plan.seed, kSeedBytes);
  const std::vector<uint8_t> want = gpu::testing::Reference(spec);
  std::vector<uint64_t> idx = {7000, 7999, 8000, 46999, 12345};
  std::vector<uint8_t> got(idx.size() * 32);
  ASSERT_TRUE((*memory)->Lookup(idx.data(), idx.size(), got.data()).ok());
  for (size_t i = 0; i < idx.size(); ++i) {
    EXPECT_EQ(0, std::memcmp(got.data() + i * 32, want.data() + (idx[i] - plan.first) * 32, 32)) << idx[i];
  }
  uint64_t outside = 47000;
  EXPECT_EQ((*memory)->Lookup(&outside, 1, got.data()).code(), StatusCode::kInvalidArgument);

  auto rate = (*backend)->MeasureCompressionRate("EMU-1", 0.01);
  ASSERT_TRUE(rate.ok());
  EXPECT_GT(*rate, 0);
  EXPECT_EQ((*backend)->MeasureCompressionRate("nope", 0.01).status().code(), StatusCode::kNotFound);

  (*memory)->Release();
  EXPECT_EQ((*memory)->bytes_held(), 0u);
  EXPECT_EQ((*memory)->Lookup(idx.data(), 1, got.data()).code(), StatusCode::kFailedPrecondition);
}

TEST(GpuBackend, UnknownDevicesAndExhaustionAreStatuses) {
  auto backend = StartGpuBackend(DeviceKind::kHip, Emulated(1), SmallConfig());
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->Acquire("GPU-nope", {}).status().code(), StatusCode::kNotFound);
  AcquireOptions too_much;
  too_much.bytes = 2ull << 30;
  EXPECT_EQ((*backend)->Acquire("EMU-0", too_much).status().code(), StatusCode::kResourceExhausted);
  AcquireOptions all;  // all but the reserve
  all.reserve_bytes = 600ull << 20;
  auto memory = (*backend)->Acquire("EMU-0", all);
  ASSERT_TRUE(memory.ok());
  EXPECT_LE((*memory)->bytes_held(), (1ull << 30) - (600ull << 20));
}

TEST(GpuBackend, NoDeviceMeansUnavailable) {
  auto none = StartGpuBackend(DeviceKind::kCuda, Emulated(0));
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable);
  // The factory's constructors never fail hard: without a device (or without the runtime
  // compiled in) they say why, and the agent carries on.
  auto cuda = MakeCudaBackend();
  if (!cuda.ok()) EXPECT_EQ(cuda.status().code(), StatusCode::kUnavailable) << cuda.status().ToString();
  auto hip = MakeHipBackend();
  if (!hip.ok()) EXPECT_EQ(hip.status().code(), StatusCode::kUnavailable) << hip.status().ToString();
}

TEST(GpuHostFiller, LabelsHostMemoryOnTheGpuByteForByte) {
  auto runtime = Emulated(1);
  auto* emulated = static_cast<gpu::EmulatedRuntime*>(runtime.get());
  auto filler = GpuHostFiller::Create(std::move(runtime), 0, 256 * 1024);
  ASSERT_TRUE(filler.ok()) << filler.status().ToString();
  EXPECT_EQ((*filler)->device(), "emulated:EMU-0");
  for (LabelFormat format : {LabelFormat::kC1, LabelFormat::k192}) {
    RegionSpec plan;
    plan.format = format;
    for (int i = 0; i < kSeedBytes; ++i) plan.seed[i] = static_cast<uint8_t>(3 * i + 1);
    plan.chunk_labels = 512;
    plan.first = 512 * 9 + (format == LabelFormat::kC1 ? 100 : 0);
    plan.count = 512 * 30 + 17;
    std::vector<uint8_t> host(plan.count * 32 + 64);
    uint8_t* aligned = host.data() + (32 - reinterpret_cast<uintptr_t>(host.data()) % 32) % 32;
    ASSERT_TRUE((*filler)->Fill(aligned, plan, {}).ok());
    RegionSpec spec = gpu::testing::Spec(format, plan.chunk_labels, plan.first, plan.count);
    std::memcpy(spec.seed, plan.seed, kSeedBytes);
    EXPECT_EQ(gpu::testing::Reference(spec), std::vector<uint8_t>(aligned, aligned + plan.count * 32))
        << LabelFormatName(format);
    EXPECT_EQ(emulated->live_registrations(), 0);  // unpinned after the fill
    EXPECT_EQ(emulated->live_allocations(), 0);    // device scratch freed
  }
  EXPECT_EQ(GpuHostFiller::Create(Emulated(1), 3).status().code(), StatusCode::kUnavailable);
}

}  // namespace
}  // namespace wipeproof

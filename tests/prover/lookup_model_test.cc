// The device model of a round's lookups (prover/backends/gpu/lookup_model.h): streams started
// together pay their submissions and copies each, the device's latency once.
#include "prover/backends/gpu/lookup_model.h"

#include <gtest/gtest.h>

namespace wipeproof {
namespace gpu {
namespace {

TEST(LookupModelTest, EightStreamsPayTheDeviceLatencyOnce) {
  const LookupAssumptions a;
  const LookupModel one = ModelLookups(a, 256, 1);
  const LookupModel eight = ModelLookups(a, 256, 8);
  EXPECT_EQ(one.streams, 1);
  EXPECT_EQ(eight.streams, 8);
  EXPECT_DOUBLE_EQ(eight.device_us, one.device_us);
  // 8 submissions and 8 copies of 256 labels (8 KiB at copy_bytes_per_s), one device latency.
  const double copy_us = 256 * 32 / a.copy_bytes_per_s * 1e6;
  const double stage_us = 256 * a.stage_s_per_label * 1e6;
  EXPECT_NEAR(eight.total_us - one.total_us, 7 * (stage_us + a.submit_s * 1e6 + copy_us), 1e-9);
  EXPECT_NEAR(one.total_us,
              (a.submit_s + a.start_latency_s + a.host_read_latency_s + a.place_latency_s + a.memory_latency_s +
               a.host_write_s + a.completion_s) *
                      1e6 +
                  stage_us + copy_us,
              1e-9);
  // With the default assumptions (the kernel placing the halves, the host copying indices) 8
  // lookups started together cost less than half of 8 one after another, whether a round's q = 256
  // is spread over 8 devices (32 labels each) or each device answers 256 (the host's serial
  // submissions are what remains). With the host placing the halves (~29 ns a label, the first
  // H200 run) 8 x 256 labels did not: their staging was serial.
  EXPECT_LT(ModelLookups(a, 32, 8).total_us, 0.5 * 8 * ModelLookups(a, 32, 1).total_us);
  EXPECT_LT(eight.total_us, 0.5 * 8 * one.total_us);
  LookupAssumptions host_placed = a;
  host_placed.stage_s_per_label = 29e-9;
  host_placed.place_latency_s = 0;
  EXPECT_GT(ModelLookups(host_placed, 256, 8).total_us, 0.5 * 8 * ModelLookups(host_placed, 256, 1).total_us);
}

TEST(LookupModelTest, WithoutHostCostsStreamsCostNothingMore) {
  LookupAssumptions a;
  a.submit_s = 0;
  a.stage_s_per_label = 0;
  a.copy_bytes_per_s = 1e300;
  EXPECT_NEAR(ModelLookups(a, 4096, 8).total_us, ModelLookups(a, 4096, 1).total_us, 1e-9);
}

TEST(LookupModelTest, FewerThanOneStreamIsOne) {
  const LookupAssumptions a;
  EXPECT_EQ(ModelLookups(a, 256, 0).streams, 1);
  EXPECT_DOUBLE_EQ(ModelLookups(a, 256, -3).total_us, ModelLookups(a, 256, 1).total_us);
}

}  // namespace
}  // namespace gpu
}  // namespace wipeproof

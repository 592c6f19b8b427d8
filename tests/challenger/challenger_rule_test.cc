// Known answers for the deadline rule and the stated bound (design-brief.md "The deadline rule" and
// "Protocol v1" step 4). Expected values computed by hand / with Python's math module:
//   floor = 1.5 * m * c_node * t_min / safety;  f(c, N) = 1 - (1 - c)^(1/N).
#include <gtest/gtest.h>

#include "challenger/parameters/deadline_rule.h"
#include "challenger/session/bound.h"
#include "challenger/session/verdict.h"

namespace wipeproof {
namespace {

TEST(DeadlineRuleTest, KnownFloors) {
  // m = 2^14, c1, commodity CPU 40 ns, safety 2: 1.5 * 16384 * 40 ns / 2 = 491.52 us.
  EXPECT_DOUBLE_EQ(RecomputeFloorPs(16384, LabelFormat::kC1, 40'000, 2.0), 491'520'000.0);
  // m = 2^17, 192 (c_node 2), ASIC 5 ns, safety 2: 1.5 * 131072 * 2 * 5 ns / 2 = 983.04 us.
  EXPECT_DOUBLE_EQ(RecomputeFloorPs(131072, LabelFormat::k192, 5'000, 2.0), 983'040'000.0);
  // The built-in profile's m = 2^12: 122.88 us, far below its 50 ms loopback deadline.
  EXPECT_DOUBLE_EQ(RecomputeFloorPs(4096, LabelFormat::kC1, 40'000, 2.0), 122'880'000.0);
  // c1 at 2m has the floor of 192 at m (label-spec.md §5).
  EXPECT_DOUBLE_EQ(RecomputeFloorPs(32768, LabelFormat::kC1, 40'000, 2.0),
                   RecomputeFloorPs(16384, LabelFormat::k192, 40'000, 2.0));
}

TEST(DeadlineRuleTest, SatisfiedIffDeadlineAtMostFloor) {
  DeadlineRuleResult ok = CheckDeadlineRule(16384, LabelFormat::kC1, 40'000, 2.0, 491, "commodity-cpu");
  EXPECT_TRUE(ok.satisfied);
  EXPECT_EQ(ok.floor_us, 491u);
  EXPECT_EQ(ok.explanation, "round deadline 491 us <= recompute floor 491.52 us for class commodity-cpu");
  DeadlineRuleResult late = CheckDeadlineRule(16384, LabelFormat::kC1, 40'000, 2.0, 492, "commodity-cpu");
  EXPECT_FALSE(late.satisfied);
  EXPECT_EQ(late.explanation, "round deadline 492 us > recompute floor 491.52 us for class commodity-cpu");
  // Exactly at the floor counts: 1.5 * 1024 * 1 us / 1 = 1536 us.
  EXPECT_TRUE(CheckDeadlineRule(1024, LabelFormat::kC1, 1'000'000, 1.0, 1536, "x").satisfied);
  EXPECT_FALSE(CheckDeadlineRule(1024, LabelFormat::kC1, 1'000'000, 1.0, 1537, "x").satisfied);
  // The built-in profile's 50 ms deadline does not rule out a CPU at m = 2^12.
  EXPECT_FALSE(CheckDeadlineRule(4096, LabelFormat::kC1, 40'000, 2.0, 50'000, "commodity-cpu").satisfied);
}

TEST(DeadlineRuleTest, HonestMargin) {
  EXPECT_FALSE(HonestMarginMet(400, 0, 1.2));  // not measured
  EXPECT_TRUE(HonestMarginMet(400, 200, 1.2));
  EXPECT_FALSE(HonestMarginMet(400, 350, 1.2));
}

TEST(BoundTest, MissingFraction) {
  EXPECT_DOUBLE_EQ(MissingFractionBound(0.99, 1), 0.99);
  EXPECT_NEAR(MissingFractionBound(0.99, 16), 0.2501057906675441, 1e-15);
  EXPECT_NEAR(MissingFractionBound(0.99, 1024), 0.004487139084149772, 1e-15);
  EXPECT_DOUBLE_EQ(PerDeviceConfidence(0.99, 1), 0.99);
  EXPECT_DOUBLE_EQ(PerDeviceConfidence(0.99, 2), 0.995);
  EXPECT_DOUBLE_EQ(PerDeviceConfidence(0.99, 4), 0.9975);
}

TEST(BoundTest, OneDeviceKnownAnswer) {
  // 2 GiB planned, 512 MiB allowed reserve, 1024 chunks checked, c = 0.99:
  // 536870912 + ceil(0.004487139084149772 * 2^31) = 536870912 + 9636058.
  const uint64_t gib2 = uint64_t{1} << 31, reserve = uint64_t{512} << 20;
  BoundResult b = ComputeBound({{gib2 + reserve, gib2, 1024}}, 0.99);
  ASSERT_EQ(b.device_bytes.size(), 1u);
  EXPECT_EQ(b.device_bytes[0], reserve + 9'636'058u);
  EXPECT_EQ(b.total_bytes, b.device_bytes[0]);
  EXPECT_DOUBLE_EQ(b.per_device_confidence, 0.99);
}

TEST(BoundTest, UnionBoundOverDevices) {
  // Two 2 GiB devices, no reserve, 1024 chunks each, c = 0.99: each at 0.995,
  // ceil((1 - 0.005^(1/1024)) * 2^31) = ceil(11082680.48) = 11082681.
  const uint64_t gib2 = uint64_t{1} << 31;
  BoundResult b = ComputeBound({{gib2, gib2, 1024}, {gib2, gib2, 1024}}, 0.99);
  EXPECT_DOUBLE_EQ(b.per_device_confidence, 0.995);
  EXPECT_EQ(b.device_bytes[0], 11'082'681u);
  EXPECT_EQ(b.device_bytes[1], 11'082'681u);
  EXPECT_EQ(b.total_bytes, 2 * 11'082'681u);
  // The sub-chunk remainder of a capacity counts as not wiped, like the reserve.
  BoundResult r = ComputeBound({{gib2 + 100, gib2, 1024}}, 0.99);
  EXPECT_EQ(r.device_bytes[0], 100u + 9'636'058u);
}

TEST(BoundTest, PercentFormatting) {
  EXPECT_EQ(FormatPercent(0.99), "99%");
  EXPECT_EQ(FormatPercent(0.995), "99.5%");
  EXPECT_EQ(FormatPercent(0.99999), "99.999%");
}

}  // namespace
}  // namespace wipeproof

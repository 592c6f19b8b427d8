// Known answers for the deadline rule and the stated bound (challenger/session/bound.h). Expected
// values computed by hand / with Python's math module:
//   floor = 1.5 * m * c_node * t_min / safety;  f(c, N) = 1 - (1 - c)^(1/N).
// The node statement's maximum is also checked against brute force on small cases.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

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
  // 536870912 + ceil(0.004487139084149772 * 2^31) = 536870912 + 9636058. For one device the node
  // statement is the one-device formula.
  const uint64_t gib2 = uint64_t{1} << 31, reserve = uint64_t{512} << 20;
  BoundResult b = ComputeBound({{gib2 + reserve, gib2, 1024}}, 0.99);
  ASSERT_EQ(b.device_bytes.size(), 1u);
  EXPECT_EQ(b.device_bytes[0], reserve + 9'636'058u);
  EXPECT_EQ(b.node.missing_bytes, 9'636'058u);
  EXPECT_EQ(b.node.outside_bytes, reserve);
  EXPECT_EQ(b.total_bytes, b.device_bytes[0]);
  EXPECT_DOUBLE_EQ(b.per_device_confidence, 0.99);
  // The closed form against the one-device formula over a range of N and c.
  for (double c : {0.5, 0.9, 0.99, 0.999999}) {
    for (uint64_t n : {uint64_t{1}, uint64_t{7}, uint64_t{688}, uint64_t{1} << 20}) {
      const JointBound j = ComputeJointBound({{gib2, gib2, n}}, c);
      EXPECT_NEAR(j.worst_fractions[0], MissingFractionBound(c, n), 1e-13 * MissingFractionBound(c, n))
          << c << " " << n;
      EXPECT_NEAR(static_cast<double>(j.missing_bytes), MissingFractionBound(c, n) * static_cast<double>(gib2), 1.0);
      EXPECT_GE(static_cast<double>(j.missing_bytes), MissingFractionBound(c, n) * static_cast<double>(gib2));
    }
  }
}

TEST(BoundTest, NodeStatementTakesTheDevicesTogether) {
  // Two 2 GiB devices, no reserve, 1024 chunks each, c = 0.99. Checks in proportion to the bytes act
  // like one pool of 2048 chunks: ceil((1 - 0.01^(1/2048)) * 2^32) = ceil(9646891.71) = 9646892.
  const uint64_t gib2 = uint64_t{1} << 31;
  BoundResult b = ComputeBound({{gib2, gib2, 1024}, {gib2, gib2, 1024}}, 0.99);
  EXPECT_EQ(b.node.missing_bytes, 9'646'892u);
  EXPECT_EQ(b.total_bytes, 9'646'892u);
  // The per-device figures stay as diagnostics: each at 0.995, ceil((1 - 0.005^(1/1024)) * 2^31).
  EXPECT_DOUBLE_EQ(b.per_device_confidence, 0.995);
  EXPECT_EQ(b.device_bytes[0], 11'082'681u);
  EXPECT_EQ(b.device_bytes[1], 11'082'681u);
  // Every device's reserve and sub-chunk remainder counts in full in the node statement.
  BoundResult r = ComputeBound({{gib2 + 100, gib2, 1024}, {gib2 + 5000, gib2, 1024}}, 0.99);
  EXPECT_EQ(r.node.outside_bytes, 5100u);
  EXPECT_EQ(r.total_bytes, 5100u + 9'646'892u);
  EXPECT_EQ(r.device_bytes[0], 100u + 11'082'681u);
}

// The largest sum f_d P_d with sum N_d * -ln(1 - f_d) <= -ln(1 - c), by brute force: a grid over
// every device but the last, on the budget's own scale (t_d = -ln(1 - f_d) in [0, L / N_d]), the
// last device's f then the largest the remaining budget allows.
double BruteForceMissing(const std::vector<double>& p, const std::vector<double>& n, double c, int steps) {
  const double budget = -std::log1p(-c);
  double best = 0;
  std::vector<int> idx(p.size() - 1, 0);
  for (;;) {
    double used = 0, sum = 0;
    for (size_t d = 0; d + 1 < p.size(); ++d) {
      const double t = budget / n[d] * static_cast<double>(idx[d]) / steps;
      used += n[d] * t;
      sum += -std::expm1(-t) * p[d];
    }
    if (used <= budget) {
      const double f_last = -std::expm1(-(budget - used) / n.back());
      best = std::max(best, sum + f_last * p.back());
    }
    size_t d = 0;
    while (d < idx.size() && ++idx[d] > steps) idx[d++] = 0;
    if (d == idx.size()) break;
  }
  return best;
}

TEST(BoundTest, ClosedFormMatchesBruteForce) {
  struct Case {
    std::vector<double> p, n;
    double c;
  };
  const Case cases[] = {
      {{1000, 3000}, {10, 10}, 0.9},          // unequal bytes, equal checks: both active
      {{1000, 3000}, {40, 2}, 0.99},          // the lightly checked device takes most
      {{5000, 10}, {3, 50}, 0.999},           // a small, heavily checked device drops out (f = 0)
      {{2000, 2000, 2000}, {5, 5, 5}, 0.99},  // equal ratios: one pool
      {{700, 1500, 90}, {3, 20, 1}, 0.95},    // three ratios, one inactive
      {{1 << 20, 1 << 10, 1 << 15}, {64, 1, 8}, 0.5},
  };
  for (const Case& k : cases) {
    std::vector<DeviceBoundInput> in;
    double planned = 0;
    for (size_t d = 0; d < k.p.size(); ++d) {
      in.push_back({static_cast<uint64_t>(k.p[d]), static_cast<uint64_t>(k.p[d]), static_cast<uint64_t>(k.n[d])});
      planned += k.p[d];
    }
    const JointBound j = ComputeJointBound(in, k.c);
    const double brute = BruteForceMissing(k.p, k.n, k.c, k.p.size() == 2 ? 200'000 : 1'500);
    // Brute force only finds feasible points: the closed form is at least as large, and not by more
    // than the grid's resolution.
    EXPECT_GE(static_cast<double>(j.missing_bytes) + 1e-9, brute);
    EXPECT_LE(static_cast<double>(j.missing_bytes), brute * (1 + 1e-3) + 2) << k.p[0] << " " << k.n[0];
    // The worst case it reports is feasible and attains it.
    double used = 0, sum = 0;
    for (size_t d = 0; d < k.p.size(); ++d) {
      used += k.n[d] * -std::log1p(-j.worst_fractions[d]);
      sum += j.worst_fractions[d] * k.p[d];
    }
    EXPECT_NEAR(used, -std::log1p(-k.c), 1e-9);
    EXPECT_NEAR(sum, static_cast<double>(j.missing_bytes), 1.5);  // rounded up, with 1e-12 to spare
    std::vector<uint64_t> p64;
    for (double x : k.p) p64.push_back(static_cast<uint64_t>(x));
    EXPECT_NEAR(JointMissingFraction(p64, k.n, k.c) * planned, sum, 1e-6 * planned);
  }
  // Equal ratios are one pool: M = (sum P)(1 - (1 - c)^(1 / sum N)).
  const JointBound pool = ComputeJointBound({{2000, 2000, 5}, {2000, 2000, 5}, {2000, 2000, 5}}, 0.99);
  EXPECT_NEAR(static_cast<double>(pool.missing_bytes), std::ceil(6000 * MissingFractionBound(0.99, 15)), 1);
}

TEST(BoundTest, AnUncheckedDeviceCountsInFull) {
  const JointBound j = ComputeJointBound({{4096, 4000, 0}, {1 << 20, 1 << 20, 100}}, 0.99);
  EXPECT_EQ(j.worst_fractions[0], 1.0);
  EXPECT_EQ(j.outside_bytes, 96u);
  EXPECT_GE(j.missing_bytes, 4000u + static_cast<uint64_t>(MissingFractionBound(0.99, 100) * (1 << 20)));
}

// The numbers: nine equal devices, N = 688 chunks each, c = 0.999. The old union bound
// stated 1.31% per device; the node statement over the same checks is 0.11% of the planned bytes,
// and the 1% target needs only 688 chunks in all (calibration_rule.h plans that).
// threat-model: T-STATEMENT-WEAK
TEST(BoundTest, NineDevicesUnionVersusNodeStatement) {
  const uint64_t planned = uint64_t{140} << 30;
  std::vector<DeviceBoundInput> nine(9, {planned, planned, 688});
  BoundResult b = ComputeBound(nine, 0.999);
  EXPECT_NEAR(MissingFractionBound(b.per_device_confidence, 688), 0.013146798226376412, 1e-12);
  EXPECT_NEAR(static_cast<double>(b.node.missing_bytes) / (9.0 * planned), 0.0011149715096569388, 1e-12);
  std::vector<uint64_t> p(9, planned);
  EXPECT_LE(JointMissingFraction(p, std::vector<double>(9, 688.0 / 9), 0.999), 0.01);
  EXPECT_GT(JointMissingFraction(p, std::vector<double>(9, 687.0 / 9), 0.999), 0.01);
}

// Why per-device statements are unsound: a prover moves labels of device 0 into device 1's reserve,
// keeps device 0's memory for itself, and every label answers. Device 0's per-device figure then
// understates what device 0 kept unwiped; the node statement, reserves in full, still covers it.
// threat-model: T-RELOCATE-RESERVE
TEST(BoundTest, RelocationIntoAnotherReserveBreaksPerDeviceFiguresNotTheNodeStatement) {
  const uint64_t chunk = 256 * 32, planned = 32 * chunk, reserve = 16 * chunk;
  const std::vector<DeviceBoundInput> devices = {{planned + reserve, planned, 12}, {planned + reserve, planned, 12}};
  const BoundResult b = ComputeBound(devices, 0.99);
  const uint64_t moved = reserve;  // device 1's whole reserve now holds device 0's labels
  const uint64_t device0_unwiped = reserve + moved, device1_unwiped = 0;
  EXPECT_LT(b.device_bytes[0], device0_unwiped);                // the per-device figure is false
  EXPECT_GE(b.total_bytes, device0_unwiped + device1_unwiped);  // the node statement holds
}

// The wave statement: the same joint bound over every member's devices, only for a complete wave
// whose members all passed with a bound of their own.
TEST(WaveBoundTest, StatedOnlyForACompleteWaveOfPassingMembers) {
  const uint64_t gib2 = uint64_t{1} << 31;
  WaveMemberBound a{"node-a", true, true, 0.99, {{gib2 + 100, gib2, 1024}}};
  WaveMemberBound b{"node-b", true, true, 0.99, {{gib2, gib2, 1024}}};
  const WaveBoundSummary w = SummarizeWaveBound("rack-1", {a, b}, /*complete=*/true);
  ASSERT_TRUE(w.bound_stated) << w.statement;
  // Two 2 GiB devices with 1024 chunks each: one pool of 2048 (9646892 bytes), plus node-a's 100.
  EXPECT_EQ(w.bound.missing_bytes, 9'646'892u);
  EXPECT_EQ(w.bound.total_bytes, 100u + 9'646'892u);
  EXPECT_EQ(w.statement,
            "at 99% confidence at most 9646992 bytes of wave rack-1's planned memory (2 node(s): node-a, node-b; 2 "
            "devices, taken together) were not wiped: up to 9646892 of its 4294967296 planned bytes, plus all 100 "
            "bytes of allowed reserves and sub-chunk remainders");
  EXPECT_EQ(SummarizeWaveBound("rack-1", {a, b}, false).statement,
            "no bound for wave rack-1: the wave is not complete (not every node of it was in the run, or the "
            "inventory does not declare it complete)");
  WaveMemberBound failed = b;
  failed.pass = false;
  EXPECT_EQ(SummarizeWaveBound("rack-1", {a, failed}, true).statement, "no bound for wave rack-1: node node-b failed");
  WaveMemberBound unbounded = b;
  unbounded.bound_stated = false;
  EXPECT_FALSE(SummarizeWaveBound("rack-1", {a, unbounded}, true).bound_stated);
  WaveMemberBound other_c = b;
  other_c.confidence = 0.999;
  EXPECT_FALSE(SummarizeWaveBound("rack-1", {a, other_c}, true).bound_stated);
  EXPECT_FALSE(SummarizeWaveBound("rack-1", {}, true).bound_stated);
}

TEST(BoundTest, PercentFormatting) {
  EXPECT_EQ(FormatPercent(0.99), "99%");
  EXPECT_EQ(FormatPercent(0.995), "99.5%");
  EXPECT_EQ(FormatPercent(0.99999), "99.999%");
}

}  // namespace
}  // namespace wipeproof

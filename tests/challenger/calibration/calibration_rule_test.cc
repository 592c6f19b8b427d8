// The calibration rule (challenger/calibration/calibration_rule.h) on synthetic inputs with known answers,
// refusals, and the property that inflating what a node measures or claims never loosens a
// deadline or lowers m; adversary-class files; profiles written by calibrate load back; the plan
// calculator's numbers for the reference deployments of design-brief.md.
//
// Known answers are worked by hand from the rule (docs/calibration.md "The rule"):
//   floor(m) = 1.5 * m * c_node * t_min / safety; commodity-cpu (40 ns, 2): 30 ns * m;
//   fpga-asic (5 ns, 2): 3.75 ns * m. At m = 2^14 the CPU floor is 491.52 us, at 2^17 the ASIC one.
//   N = ceil(ln(1 - 0.999) / ln(1 - 0.01)) = ceil(687.31) = 688.
#include "challenger/calibration/calibration_rule.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "challenger/calibration/parameter_planner.h"
#include "challenger/parameters/adversary_classes.h"
#include "challenger/parameters/deadline_rule.h"
#include "challenger/parameters/profile_json_writer.h"
#include "challenger/session/bound.h"

namespace wipeproof {
namespace {

const AdversaryClass kCpu{"commodity-cpu", 40'000, 2.0};
const AdversaryClass kAsic{"fpga-asic", 5'000, 2.0};

CalibrationPolicy Policy(const AdversaryClass& a, double margin = 1.0) {
  CalibrationPolicy p;
  p.adversary = a;
  p.round_margin = margin;
  return p;
}

TEST(CalibrationRuleTest, PercentilesAreNearestRank) {
  std::vector<uint64_t> samples;
  for (uint64_t i = 1000; i >= 1; --i) samples.push_back(i);  // unsorted on purpose
  const RoundTimeStats s = SummarizeRoundTimes(samples);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_EQ(s.min_us, 1u);
  EXPECT_EQ(s.p50_us, 500u);
  EXPECT_EQ(s.p90_us, 900u);
  EXPECT_EQ(s.p99_us, 990u);
  EXPECT_EQ(s.p999_us, 999u);
  EXPECT_EQ(s.max_us, 1000u);
  EXPECT_DOUBLE_EQ(s.mean_us, 500.5);
  EXPECT_EQ(s.jitter_us, 490u);
  // 2000 samples: p99.9 is the 1998th smallest, so two samples lie above it.
  std::vector<uint64_t> two(2000, 100);
  two[0] = 5000;
  two[1] = 4000;
  EXPECT_EQ(SummarizeRoundTimes(two).p999_us, 100u);
  two[2] = 3000;
  EXPECT_EQ(SummarizeRoundTimes(two).p999_us, 3000u);
}

TEST(CalibrationRuleTest, ReferenceDeploymentsKnownAnswers) {
  // In-rack challenger, honest p99.9 200 us, margin 1: deadline 400 us.
  auto cpu = ChooseRoundRule(200, Policy(kCpu));
  ASSERT_TRUE(cpu.ok()) << cpu.status().ToString();
  EXPECT_EQ(cpu->round_deadline_us, 400u);
  EXPECT_EQ(cpu->chunk_labels, 16384u);  // 2^13 gives 245.76 us < 400
  EXPECT_EQ(cpu->rule.floor_us, 491u);
  EXPECT_TRUE(cpu->rule.satisfied);
  auto asic = ChooseRoundRule(200, Policy(kAsic));
  ASSERT_TRUE(asic.ok());
  EXPECT_EQ(asic->chunk_labels, 131072u);
  // 192 (c_node 2) halves m for the same floor.
  CalibrationPolicy p192 = Policy(kAsic);
  p192.format = LabelFormat::k192;
  EXPECT_EQ(ChooseRoundRule(200, p192)->chunk_labels, 65536u);
  // Margin 0.2: 180 us -> 216 us, CPU floor 245.76 us at 2^13.
  auto tight = ChooseRoundRule(180, Policy(kCpu, 0.2));
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->round_deadline_us, 216u);
  EXPECT_EQ(tight->chunk_labels, 8192u);
  // The deadline rounds up: 201 * 1.5 = 301.5 -> 302.
  EXPECT_EQ(ChooseRoundRule(201, Policy(kCpu, 0.5))->round_deadline_us, 302u);
  // At the floor or below: 30 ns * 2^10 = 30.72 us; 25 us * 1.2 = 30 us fits 2^10, 26 us * 1.2 ->
  // 32 us needs 2^11.
  EXPECT_EQ(ChooseRoundRule(25, Policy(kCpu, 0.2))->chunk_labels, 1024u);
  EXPECT_EQ(ChooseRoundRule(26, Policy(kCpu, 0.2))->chunk_labels, 2048u);
  // A margin below 0.2 would make profiles whose verdicts state no bound (verdict.h).
  EXPECT_EQ(ChooseRoundRule(25, Policy(kCpu, 0.1)).status().code(), StatusCode::kInvalidArgument);
}

TEST(CalibrationRuleTest, RefusesWhenNoMUpToTheCapFits) {
  // ASIC at 2^20: floor 3932.16 us. An honest p99.9 of 5 ms with margin 1 wants 10 ms.
  auto asic = ChooseRoundRule(5000, Policy(kAsic));
  ASSERT_FALSE(asic.ok());
  EXPECT_EQ(asic.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(asic.status().message().find("no m up to 2^20"), std::string::npos) << asic.status().ToString();
  EXPECT_NE(asic.status().message().find("3932.16 us"), std::string::npos);
  EXPECT_NE(asic.status().message().find("at most 1966.08 us"), std::string::npos);  // 3932.16 / 2
  // The CPU class still fits: 30 ns * m >= 10000 us at m = 2^19 (15728.64 us).
  EXPECT_EQ(ChooseRoundRule(5000, Policy(kCpu))->chunk_labels, 524288u);
  // The authority's cap refuses earlier: 2000 us * 2 needs 2^17 for the CPU class.
  CalibrationPolicy capped = Policy(kCpu);
  capped.max_chunk_labels = 65536;
  auto refused = ChooseRoundRule(2000, capped);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("no m up to 2^16"), std::string::npos);
  // Nothing measured is an error, not a refusal.
  EXPECT_EQ(ChooseRoundRule(0, Policy(kCpu)).status().code(), StatusCode::kInvalidArgument);
}

TEST(CalibrationRuleTest, SamplingKnownAnswers) {
  EXPECT_EQ(ChunksForDetection(0.01, 0.999), 688u);
  EXPECT_EQ(ChunksForDetection(0.01, 0.99), 459u);     // ln(0.01)/ln(0.99) = 458.2
  EXPECT_EQ(ChunksForDetection(0.001, 0.999), 6905u);  // 6904.3
  // N = 688 over the node, shared in proportion to the chunks: ceil(688 * 10^6 / 1286518) = 535 and
  // ceil(688 * 286518 / 1286518) = 154. R = 9 (535 / 64 = 8.4 rounds in expectation); q_d =
  // ceil(share / 9), 60 and 18, reach 539.9 and 162.0 distinct chunks.
  auto s = ChooseSampling({1'000'000, 286'518}, Policy(kCpu));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->chunks_needed, 688u);
  EXPECT_EQ(s->rounds, 9u);
  EXPECT_EQ(s->devices[0].share, 535u);
  EXPECT_EQ(s->devices[1].share, 154u);
  EXPECT_EQ(s->devices[0].labels_per_round, 60u);
  EXPECT_EQ(s->devices[1].labels_per_round, 18u);
  for (const DeviceSampling& d : s->devices) {
    EXPECT_GE(d.expected_distinct, static_cast<double>(d.share));
    EXPECT_TRUE(d.reaches_share);
  }
  EXPECT_NEAR(s->planned_fraction, 0.009882255163065758, 1e-9);
  EXPECT_TRUE(s->reaches_target);
  // A device of 2000 chunks alone: repeats across rounds cost distinct chunks; at q = 64 it takes
  // R = ceil(ln(1 - 688/2000) / ln(1 - 64/2000)) = ceil(12.96) = 13 rounds to expect 688.
  auto small = ChooseSampling({2000}, Policy(kCpu));
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->rounds, 13u);
  EXPECT_GE(small->devices[0].expected_distinct, 688.0);
  EXPECT_TRUE(small->reaches_target);
  // Fewer chunks in all than N: the node statement cannot reach the target.
  auto under = ChooseSampling({500}, Policy(kCpu));
  ASSERT_TRUE(under.ok());
  EXPECT_FALSE(under->reaches_target);
  EXPECT_GT(under->planned_fraction, 0.01);
  // A device of fewer than q chunks: every chunk is asked every round, one round is enough, and the
  // statement is the one-device bound for 40 chunks.
  auto tiny = ChooseSampling({40}, Policy(kCpu));
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(tiny->rounds, 1u);
  EXPECT_EQ(tiny->devices[0].labels_per_round, 40u);
  EXPECT_FALSE(tiny->reaches_target);
  EXPECT_NEAR(tiny->planned_fraction, 1 - std::pow(0.001, 1.0 / 40), 1e-12);
  EXPECT_NEAR(tiny->devices[0].detection_probability, 1 - std::pow(0.99, 40), 1e-12);
  EXPECT_EQ(ChooseSampling({0}, Policy(kCpu)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_NEAR(DetectionProbability(0.01, 688), 1 - std::pow(0.99, 688), 1e-12);
}

// The issue's case: nine equal devices at f = 1%, c = 0.999. Sized per device (N = 688 each) under
// a union bound the verdict stated 1.31%; sized for the node statement the planned R and q give at
// most 1% with 688 chunks in all (77 per device, R = 2, q = 39), and the verdict's own arithmetic
// (bound.h) on the planned counts agrees.
// threat-model: T-STATEMENT-WEAK
TEST(CalibrationRuleTest, PlannedRoundsGiveTheTargetForTheNodeStatement) {
  const std::vector<uint64_t> nine(9, 4600);
  auto s = ChooseSampling(nine, Policy(kCpu));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rounds, 2u);
  double checked = 0;
  std::vector<DeviceBoundInput> devices;
  for (const DeviceSampling& d : s->devices) {
    EXPECT_EQ(d.share, 77u);
    EXPECT_EQ(d.labels_per_round, 39u);
    checked += d.expected_distinct;
    // The verdict counts whole distinct chunks: the planned expectation, rounded down.
    const uint64_t chunk_bytes = 16384 * 32;
    devices.push_back({d.chunks * chunk_bytes, d.chunks * chunk_bytes, static_cast<uint64_t>(d.expected_distinct)});
  }
  EXPECT_GE(checked, 688.0);
  EXPECT_TRUE(s->reaches_target);
  EXPECT_LE(s->planned_fraction, 0.01);
  const BoundResult stated = ComputeBound(devices, 0.999);
  EXPECT_LE(static_cast<double>(stated.total_bytes) / static_cast<double>(stated.node.planned_bytes), 0.01);
  // The same checks under the old per-device union bound: more than the 1% asked for.
  EXPECT_GT(MissingFractionBound(PerDeviceConfidence(0.999, 9), 77), 0.05);
}

// threat-model: T-FILL-DEADLINE
TEST(CalibrationRuleTest, FillDeadlineFromTheMeasurementNeverWidenedByClaims) {
  const CalibrationPolicy p = Policy(kCpu);  // slack 0.5
  auto measured = ChooseFillDeadline(10'000'000, 0, p);
  ASSERT_TRUE(measured.ok());
  EXPECT_EQ(measured->fill_deadline_us, 15'000'000u);
  // A node claiming a slower fill cannot widen it.
  auto slower = ChooseFillDeadline(10'000'000, 30'000'000, p);
  ASSERT_TRUE(slower.ok());
  EXPECT_EQ(slower->basis_us, 10'000'000u);
  EXPECT_EQ(slower->fill_deadline_us, 15'000'000u);
  // A faster claim tightens it ...
  auto faster = ChooseFillDeadline(10'000'000, 8'000'000, p);
  ASSERT_TRUE(faster.ok());
  EXPECT_EQ(faster->fill_deadline_us, 12'000'000u);
  // ... and a node too slow for its own claim is refused.
  auto refused = ChooseFillDeadline(10'000'000, 6'000'000, p);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("too slow"), std::string::npos);
  // The deadline keeps 1.2 x the measured fill (kFillDeadlineMargin): a claim of 7.9 s gives 11.85 s,
  // above the 10 s measured but below 12 s, and is refused (a wipe under it filled in 144 s against
  // a 151 s deadline); 8 s gives exactly 12 s.
  auto thin = ChooseFillDeadline(10'000'000, 7'900'000, p);
  ASSERT_FALSE(thin.ok());
  EXPECT_NE(thin.status().message().find("must keep 1.2 x the measured fill"), std::string::npos)
      << thin.status().message();
  EXPECT_TRUE(MeetsFillMargin(faster->fill_deadline_us, 10'000'000));
  EXPECT_FALSE(MeetsFillMargin(11'999'999, 10'000'000));
  // A slack below the margin could not keep it even from the measurement alone.
  CalibrationPolicy low = p;
  low.fill_slack = 0.1;
  EXPECT_EQ(ChooseFillDeadline(10'000'000, 0, low).status().code(), StatusCode::kInvalidArgument);
  // The authority's cap.
  CalibrationPolicy capped = p;
  capped.max_fill_deadline_us = 12'000'000;
  EXPECT_EQ(ChooseFillDeadline(10'000'000, 0, capped).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ChooseFillDeadline(0, 0, p).status().code(), StatusCode::kInvalidArgument);
}

CalibrationInputs Inputs(uint64_t p999_us, uint64_t fill_us) {
  CalibrationInputs in;
  in.profile_name = "test";
  std::vector<uint64_t> rounds(2000, p999_us / 2);
  for (int i = 0; i < 3; ++i) rounds[i] = p999_us;
  in.rounds = SummarizeRoundTimes(rounds);
  in.measured_fill_us = fill_us;
  in.device_labels = {uint64_t{1} << 30, (uint64_t{150754820096} - 536870912) / 32};
  in.device_models = {"host-dram", "NVIDIA H200"};
  in.calibrated_at_unix_us = 1'800'000'000'000'000;
  return in;
}

// The round deadline is also how far away a relocated label may sit and still answer in time. A
// node (or its network) slow only while calibrated would widen that reach: the authority's cap
// refuses it, naming the cap; without a cap, the derivation warns.
// threat-model: T-CALIBRATION-SLOWED
TEST(CalibrationRuleTest, TheAuthorityCapsTheRoundDeadline) {
  CalibrationPolicy capped = Policy(kAsic);  // margin 1
  capped.max_round_deadline_us = 400;
  auto at_cap = ChooseRoundRule(200, capped);  // 200 * 2 = 400: at the cap
  ASSERT_TRUE(at_cap.ok()) << at_cap.status().ToString();
  EXPECT_EQ(at_cap->round_deadline_us, 400u);
  auto over = ChooseRoundRule(201, capped);  // 402 us
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(over.status().message().find("round deadline 402 us"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find("above the authority's cap 400 us"), std::string::npos)
      << over.status().message();
  // An inflated probe (10 ms added to every round, as a delaying proxy would) is refused whole.
  EXPECT_EQ(ChooseRoundRule(10'200, capped).status().code(), StatusCode::kFailedPrecondition);

  auto warns_of_reach = [](const CalibrationResult& r) {
    for (const std::string& w : r.warnings) {
      if (w.find("reach of a relocation") != std::string::npos) return true;
    }
    return false;
  };
  CalibrationPolicy open = Policy(kAsic);
  auto uncapped = DeriveCalibratedProfile(Inputs(200, 60'000'000), open);
  ASSERT_TRUE(uncapped.ok()) << uncapped.status().ToString();
  EXPECT_TRUE(warns_of_reach(*uncapped));
  auto with_cap = DeriveCalibratedProfile(Inputs(200, 60'000'000), capped);
  ASSERT_TRUE(with_cap.ok()) << with_cap.status().ToString();
  EXPECT_FALSE(warns_of_reach(*with_cap));
  EXPECT_EQ(DeriveCalibratedProfile(Inputs(250, 60'000'000), capped).status().code(), StatusCode::kFailedPrecondition);
}

TEST(CalibrationRuleTest, DerivedProfileMeetsTheRuleAndLoadsBack) {
  auto r = DeriveCalibratedProfile(Inputs(200, 40'000'000), Policy(kCpu));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Profile& p = r->profile;
  EXPECT_TRUE(p.calibrated);
  EXPECT_EQ(p.chunk_labels, 16384u);
  EXPECT_EQ(p.round_deadline_us, 400u);
  // N = 688 over both devices: shares 129 (host, 65536 chunks) and 560 (H200, 286518 chunks), R = 9,
  // q 63 for the H200 and 15 for host-dram.
  EXPECT_EQ(p.rounds, 9u);
  EXPECT_EQ(p.labels_per_round, 63u);
  EXPECT_EQ(p.labels_per_round_by_model, (std::map<std::string, uint32_t>{{"host-dram", 15}}));
  EXPECT_LE(r->sampling.planned_fraction, 0.01);
  EXPECT_EQ(p.fill_deadline_us, 60'000'000u);
  EXPECT_EQ(p.honest_round_p999_us, 200u);
  EXPECT_EQ(p.honest_fill_us, 40'000'000u);  // the fill deadline keeps 1.5 x it
  const DeadlineRuleResult rule = CheckDeadlineRule(p.chunk_labels, p.format, p.adversary.t_min_ps,
                                                    p.adversary.safety_factor, p.round_deadline_us, p.adversary.name);
  EXPECT_TRUE(rule.satisfied) << rule.explanation;
  EXPECT_TRUE(HonestMarginMet(p.round_deadline_us, p.honest_round_p999_us, 2.0));

  // The JSON calibrate writes is the profile format: it loads back unchanged.
  auto loaded = ParseProfileJson(ProfileToJson(p).dump(2), "calibrated.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->name, p.name);
  EXPECT_EQ(loaded->chunk_labels, p.chunk_labels);
  EXPECT_EQ(loaded->format, p.format);
  EXPECT_EQ(loaded->rounds, p.rounds);
  EXPECT_EQ(loaded->labels_per_round, p.labels_per_round);
  EXPECT_EQ(loaded->labels_per_round_by_model, p.labels_per_round_by_model);
  EXPECT_EQ(loaded->round_deadline_us, p.round_deadline_us);
  EXPECT_EQ(loaded->fill_deadline_us, p.fill_deadline_us);
  EXPECT_EQ(loaded->adversary.name, p.adversary.name);
  EXPECT_EQ(loaded->adversary.t_min_ps, p.adversary.t_min_ps);
  EXPECT_EQ(loaded->adversary.safety_factor, p.adversary.safety_factor);
  EXPECT_EQ(loaded->confidence, p.confidence);
  EXPECT_EQ(loaded->calibrated, true);
  EXPECT_EQ(loaded->honest_round_p999_us, p.honest_round_p999_us);
  EXPECT_EQ(loaded->honest_fill_us, p.honest_fill_us);
  EXPECT_TRUE(SameParameters(*loaded, p));
  EXPECT_EQ(loaded->calibrated_at_unix_us, p.calibrated_at_unix_us);
  EXPECT_EQ(loaded->order_ttl_us, p.order_ttl_us);
}

// threat-model: T-SAFETY-LOW
// threat-model: T-TARGET-MISSED
TEST(CalibrationRuleTest, DerivationRefusesAndWarns) {
  // No m for the ASIC class: nothing is derived.
  auto refused = DeriveCalibratedProfile(Inputs(5000, 40'000'000), Policy(kAsic));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  // A device too small for the chosen m.
  CalibrationInputs small = Inputs(200, 1'000'000);
  small.device_labels = {1000};
  small.device_models = {"host-dram"};
  EXPECT_EQ(DeriveCalibratedProfile(small, Policy(kCpu)).status().code(), StatusCode::kFailedPrecondition);
  // Too few chunks in all for the statement asked for: the issue's loopback calibration (one device,
  // 8 chunks at m = 2^19 bound 57.8% at 99.9%) is refused with the reason, never written calibrated.
  CalibrationInputs eight = Inputs(5000, 1'000'000);  // p99.9 5 ms: m = 2^19 for the CPU class
  eight.device_labels = {uint64_t{8} << 19};
  eight.device_models = {"host-dram"};
  auto missed = DeriveCalibratedProfile(eight, Policy(kCpu));
  ASSERT_FALSE(missed.ok());
  EXPECT_EQ(missed.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missed.status().message().find("misses its target"), std::string::npos) << missed.status().message();
  EXPECT_NE(missed.status().message().find("8 chunks"), std::string::npos) << missed.status().message();
  EXPECT_NE(missed.status().message().find("57.83%"), std::string::npos) << missed.status().message();
  EXPECT_NE(missed.status().message().find("not the 1.00% asked for"), std::string::npos);
  // A class whose safety factor is below 1.5: verdicts could never state a bound under it.
  const AdversaryClass unsafe{"unsafe", 40'000, 1.2};
  auto unsafe_profile = DeriveCalibratedProfile(Inputs(200, 40'000'000), Policy(unsafe));
  ASSERT_FALSE(unsafe_profile.ok());
  EXPECT_NE(unsafe_profile.status().message().find("below 1.5"), std::string::npos);
  // A node whose own core beats the class constant: a warning, parameters unchanged.
  CalibrationInputs fast = Inputs(200, 40'000'000);
  fast.claims.sequential_compression_ps = 31'000;
  fast.claims.sequential_where = "host core";
  auto warned = DeriveCalibratedProfile(fast, Policy(kCpu));
  ASSERT_TRUE(warned.ok());
  ASSERT_FALSE(warned->warnings.empty());
  EXPECT_NE(warned->warnings[0].find("31000 ps"), std::string::npos) << warned->warnings[0];
  EXPECT_EQ(warned->profile.chunk_labels, 16384u);
}

// The property of the issue: whatever a node does to what the challenger measures (slower rounds,
// a slower fill) or to what it claims (slower fill, slower lookups, slower compression), m never
// drops, the round deadline never exceeds the recompute floor, and claims never push a deadline
// above what the challenger's own measurement gives.
TEST(CalibrationRuleTest, InflatingNodeMeasurementsNeverLoosensParameters) {
  for (const AdversaryClass& a : {kCpu, kAsic}) {
    for (const LabelFormat format : {LabelFormat::kC1, LabelFormat::k192}) {
      for (const uint64_t base_p999 : {3ull, 40ull, 180ull, 200ull, 950ull}) {
        CalibrationPolicy policy = Policy(a);
        policy.format = format;
        const uint64_t base_fill = 40'000'000;
        auto base = DeriveCalibratedProfile(Inputs(base_p999, base_fill), policy);
        ASSERT_TRUE(base.ok()) << base.status().ToString();
        uint32_t last_m = base->profile.chunk_labels;
        for (double k = 1.0; k <= 64; k *= 1.25) {
          SCOPED_TRACE(a.name + " p99.9 " + std::to_string(base_p999) + " x" + std::to_string(k));
          // Slower honest rounds (the node sleeps while the challenger measures).
          CalibrationInputs slow = Inputs(static_cast<uint64_t>(std::ceil(base_p999 * k)), base_fill);
          auto r = DeriveCalibratedProfile(slow, policy);
          if (!r.ok()) {
            // Refusal is the only other outcome, and it is final: larger inflations refuse too.
            EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
            last_m = UINT32_MAX;
            continue;
          }
          ASSERT_NE(last_m, UINT32_MAX) << "a larger inflation was accepted after a refusal";
          const Profile& p = r->profile;
          EXPECT_GE(p.chunk_labels, last_m);
          EXPECT_GE(p.chunk_labels, base->profile.chunk_labels);
          last_m = p.chunk_labels;
          EXPECT_LE(static_cast<double>(p.round_deadline_us) * 1e6,
                    RecomputeFloorPs(p.chunk_labels, p.format, a.t_min_ps, a.safety_factor));

          // Inflated claims: never a looser fill deadline than measured, never a different m or round
          // deadline.
          CalibrationInputs claimed = Inputs(base_p999, base_fill);
          claimed.claims.fill_estimate_us = static_cast<uint64_t>(base_fill * k);
          claimed.claims.sequential_compression_ps = static_cast<uint64_t>(a.t_min_ps * k);
          claimed.claims.sequential_where = "host core";
          auto c = DeriveCalibratedProfile(claimed, policy);
          ASSERT_TRUE(c.ok()) << c.status().ToString();
          EXPECT_LE(c->profile.fill_deadline_us, base->profile.fill_deadline_us);
          EXPECT_EQ(c->profile.chunk_labels, base->profile.chunk_labels);
          EXPECT_EQ(c->profile.round_deadline_us, base->profile.round_deadline_us);
          EXPECT_EQ(c->profile.rounds, base->profile.rounds);
          EXPECT_EQ(c->profile.labels_per_round, base->profile.labels_per_round);
          // Deflated fill claims (within what the slack leaves above the 1.2 x margin) only tighten the
          // fill deadline.
          CalibrationInputs deflated = Inputs(base_p999, base_fill);
          deflated.claims.fill_estimate_us = static_cast<uint64_t>(base_fill / std::min(k, 1.2));
          auto d = DeriveCalibratedProfile(deflated, policy);
          ASSERT_TRUE(d.ok()) << d.status().ToString();
          EXPECT_LE(d->profile.fill_deadline_us, base->profile.fill_deadline_us);
        }
      }
    }
  }
}

// A huge margin or p99.9 once wrapped the round deadline to 1 us (a double above 2^64 cast to
// uint64): now the scaling refuses, the policy bounds the knobs, and a derived profile never
// carries a deadline below 1.2 x the honest p99.9.
TEST(CalibrationRuleTest, HugeMarginsAndRoundTimesAreRefusedNotWrapped) {
  EXPECT_EQ(*CeilScaled(200, 2.0), 400u);
  EXPECT_EQ(*CeilScaled(1619, 1.2), 1943u);  // 1942.8 rounded up
  EXPECT_EQ(*CeilScaled(1, 1e17), 100'000'000'000'000'000ull);
  // 200 x (1 + 1e17) = 2e19 > 2^64 = 1.8e19: refused, never 1 us.
  EXPECT_EQ(CeilScaled(200, 1.0 + 1e17).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CeilScaled(UINT64_MAX, 2.0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CeilScaled(UINT64_MAX, 1.0).status().code(), StatusCode::kInvalidArgument);  // rounds to 2^64
  EXPECT_EQ(CeilScaled(5, std::nan("")).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CeilScaled(5, -1.0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CeilScaled(5, INFINITY).status().code(), StatusCode::kInvalidArgument);

  EXPECT_TRUE(ValidatePolicy(Policy(kCpu, kMaxRoundMargin)).ok());
  Status too_wide = ValidatePolicy(Policy(kCpu, 1e17));
  EXPECT_EQ(too_wide.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(too_wide.message().find("margin must be <= 100"), std::string::npos) << too_wide.message();
  CalibrationPolicy slack = Policy(kCpu);
  slack.fill_slack = kMaxFillSlack;
  EXPECT_TRUE(ValidatePolicy(slack).ok());
  slack.fill_slack = 1e17;
  EXPECT_EQ(ValidatePolicy(slack).code(), StatusCode::kInvalidArgument);

  // The tester's case: an honest p99.9 of 1619 us with margin 1e17 must not give a 1 us deadline.
  auto huge = DeriveCalibratedProfile(Inputs(1619, 40'000'000), Policy(kCpu, 1e17));
  EXPECT_EQ(huge.status().code(), StatusCode::kInvalidArgument);
  auto honest = DeriveCalibratedProfile(Inputs(1619, 40'000'000), Policy(kCpu, 0.2));
  ASSERT_TRUE(honest.ok()) << honest.status().ToString();
  EXPECT_EQ(honest->profile.round_deadline_us, 1943u);
  EXPECT_TRUE(honest->profile.calibrated);
  EXPECT_TRUE(MeetsHonestRoundMargin(honest->profile.round_deadline_us, honest->profile.honest_round_p999_us));

  // p99.9 of 2^64 - 1 (plan --round_p999_us=18446744073709551615) or just above the maximum.
  EXPECT_EQ(ChooseRoundRule(UINT64_MAX, Policy(kCpu)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseRoundRule(kMaxHonestRoundP999Us + 1, Policy(kCpu)).status().code(), StatusCode::kInvalidArgument);
  // At the maximum with the widest margin the deadline is exact (refused by the rule, not wrapped).
  auto widest = ChooseRoundRule(kMaxHonestRoundP999Us, Policy(kCpu, kMaxRoundMargin));
  EXPECT_EQ(widest.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(widest.status().message().find("deadline 101000000000 us"), std::string::npos) << widest.status().message();

  // The fill deadline goes through the same scaling.
  CalibrationPolicy fill = Policy(kCpu);
  fill.fill_slack = kMaxFillSlack;
  EXPECT_EQ(ChooseFillDeadline(UINT64_MAX / 2, 0, fill).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChooseFillDeadline(40'000'000, 0, fill)->fill_deadline_us, 4'040'000'000u);

  // A vanishing target fraction or a confidence of 1 - 1e-15 would need more than 2^64 chunks.
  CalibrationPolicy tiny = Policy(kCpu);
  tiny.target_fraction = 1e-300;
  EXPECT_EQ(ValidatePolicy(tiny).code(), StatusCode::kInvalidArgument);
  tiny.target_fraction = kMinTargetFraction;
  EXPECT_TRUE(ValidatePolicy(tiny).ok());
  tiny.confidence = 1 - 1e-15;
  EXPECT_EQ(ValidatePolicy(tiny).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ChunksForDetection(1e-300, 0.999), UINT64_MAX);
  EXPECT_EQ(ChunksForDetection(0.01, 0.999), 688u);

  EXPECT_FALSE(MeetsHonestRoundMargin(1, 1619));
  EXPECT_FALSE(MeetsHonestRoundMargin(1942, 1619));
  EXPECT_TRUE(MeetsHonestRoundMargin(1943, 1619));
  EXPECT_FALSE(MeetsHonestRoundMargin(UINT64_MAX, UINT64_MAX));
}

// A sub-picosecond sequential figure is a measurement: floor() once turned 0.5 ps into "none".
TEST(CalibrationRuleTest, SubPicosecondSequentialClaimStillWarns) {
  CalibrationInputs in = Inputs(200, 40'000'000);
  in.claims.sequential_compression_ps = 0.5;
  in.claims.sequential_where = "GPU-x";
  auto r = DeriveCalibratedProfile(in, Policy(kCpu));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool warned = false;
  for (const auto& w : r->warnings) warned = warned || w.find("measured 0.5 ps") != std::string::npos;
  EXPECT_TRUE(warned);
  EXPECT_EQ(FormatPicoseconds(0.5), "0.5");
  EXPECT_EQ(FormatPicoseconds(32552.7), "32552");
}

// threat-model: T-FAST-CORE
TEST(AdversaryClassesTest, DefaultsFileAndErrors) {
  const AdversaryClasses built_in = DefaultAdversaryClasses();
  ASSERT_EQ(built_in.classes.size(), 2u);
  EXPECT_EQ(built_in.Find("commodity-cpu")->t_min_ps, 25'000u);  // below the measured 28-30 ns
  EXPECT_EQ(built_in.Find("fpga-asic")->t_min_ps, 5'000u);
  EXPECT_EQ(built_in.Find("fpga-asic")->safety_factor, 2.0);
  EXPECT_EQ(built_in.Find("gpu").status().code(), StatusCode::kNotFound);

  auto parsed = ParseAdversaryClassesJson(
      R"({"classes": [{"name": "h200-core", "t_min_ps": 2500}, {"name": "slow", "t_min_ps": 80000, "safety_factor": 4}]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->Find("h200-core")->safety_factor, 2.0);
  EXPECT_EQ(parsed->Find("slow")->safety_factor, 4.0);
  auto file = LoadAdversaryClasses(std::string(WIPEPROOF_TESTDATA_DIR) + "/../../docs/adversary-classes.json");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->Find("fpga-asic")->t_min_ps, 5'000u);
  EXPECT_EQ(file->Find("commodity-cpu")->t_min_ps, 25'000u);  // the shipped file agrees with the built-in

  for (const char* bad : {
           R"({"classes": []})",
           R"({"classes": [{"name": "a", "t_min_ps": 0}]})",
           R"({"classes": [{"name": "a", "t_min_ps": 4294967296}]})",
           R"({"classes": [{"name": "a", "t_min_ps": 1, "safety_factor": 0.5}]})",
           R"({"classes": [{"name": "a", "t_min_ps": 1}, {"name": "a", "t_min_ps": 2}]})",
           R"({"classes": [{"name": "A b", "t_min_ps": 1}]})",
           R"({"classes": [{"name": "a", "t_min_ps": 1, "tmin": 3}]})",
           R"({"klasses": []})",
       }) {
    auto r = ParseAdversaryClassesJson(bad, "classes.json");
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

PlanInputs H200Node() {
  PlanInputs in;
  in.devices.push_back({"NVIDIA H200", 8, 150754820096ull, 536870912ull, 3.5 * 1024 * 1024 * 1024});
  in.fill_rate_chunk_labels = 16384;
  in.honest_round_p999_us = 200;
  in.policy = Policy(kCpu);
  in.classes = {kCpu, kAsic};
  in.nodes_per_wave = 1;
  in.challenger_cores = 64;
  in.verify_compressions_per_s_per_core = 1e8;
  return in;
}

// threat-model: T-STATEMENT-WEAK
TEST(PlanCalculatorTest, ReferenceDeploymentBothClasses) {
  auto r = ComputeFleetPlan(H200Node());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->classes.size(), 2u);
  const ClassPlan& cpu = r->classes[0];
  const ClassPlan& asic = r->classes[1];
  EXPECT_TRUE(cpu.feasible);
  EXPECT_EQ(cpu.chunk_labels, 16384u);
  EXPECT_EQ(asic.chunk_labels, 131072u);
  EXPECT_EQ(cpu.round_deadline_us, 400u);
  // N = 688 over the node's 8 GPUs: 86 each, R = 2 rounds of q = 44, and the node statement meets 1%.
  EXPECT_EQ(cpu.chunks_needed, 688u);
  EXPECT_EQ(cpu.rounds, 2u);
  EXPECT_EQ(cpu.devices[0].labels_per_round, 44u);
  EXPECT_TRUE(cpu.reaches_target);
  EXPECT_LE(cpu.planned_fraction, 0.01);
  // 140 GiB at 3.5 GiB/s at the rate's own m: (150754820096 - 2^29) B / 3.5 GiB/s = 39.97 s.
  EXPECT_NEAR(cpu.fill_s, (150754820096.0 - 536870912.0) / (3.5 * 1024 * 1024 * 1024), 0.01);
  // At 2^17 labels cost 276 / 186 as much (nodes per output, label-spec.md §3).
  EXPECT_GT(asic.fill_s, cpu.fill_s * 1.4);
  EXPECT_LT(asic.fill_s, cpu.fill_s * 1.6);
  // Expected labels: 8 GPUs x (~88 proof chunks + the holding pool, 16 batches of 44/8 = 5) of
  // 3.05 M compressions at 1e8/s per core, over 64 cores; a core verifies 3600 s / that per node.
  EXPECT_NEAR(cpu.expected_labels_cpu_s, 8 * (cpu.devices[0].expected_distinct + 16 * 5) * 3047422 / 1e8, 1e-6);
  EXPECT_NEAR(cpu.verification_node_wipes_per_core_hour, 3600 / cpu.expected_labels_cpu_s, 1e-9);
  EXPECT_TRUE(cpu.precompute_keeps_up);
  EXPECT_NEAR(cpu.node_wipe_s, cpu.fill_s + 2 * 400e-6, 1e-9);
  // At 2^17 the challenger needs 36.2 M compressions per chunk: 8 x 88 x 36.2 M / 6.4e9 = 4 s,
  // inside the ~59 s fill.
  EXPECT_TRUE(asic.precompute_keeps_up);
  // Twenty nodes per wave on the same 64 cores (80 s) cannot keep up.
  PlanInputs wave = H200Node();
  wave.nodes_per_wave = 20;
  auto w = ComputeFleetPlan(wave);
  ASSERT_TRUE(w.ok());
  EXPECT_FALSE(w->classes[1].precompute_keeps_up);
  EXPECT_FALSE(w->classes[1].warnings.empty());
  EXPECT_GT(w->classes[1].wave_wipe_s, w->classes[1].fill_s);
}

TEST(PlanCalculatorTest, InfeasibleClassAndFixedProfile) {
  PlanInputs far = H200Node();
  far.honest_round_p999_us = 5000;  // a challenger far away
  auto r = ComputeFleetPlan(far);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->classes[0].feasible);
  EXPECT_FALSE(r->classes[1].feasible);
  EXPECT_NE(r->classes[1].refusal.find("no m up to 2^20"), std::string::npos);

  PlanInputs fixed = H200Node();
  Profile p = DefaultProfile();  // 50 ms at m = 2^12: fails the rule
  fixed.profile = p;
  auto f = ComputeFleetPlan(fixed);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->classes.size(), 1u);
  EXPECT_EQ(f->classes[0].chunk_labels, 4096u);
  EXPECT_FALSE(f->classes[0].rule_satisfied);
  EXPECT_EQ(f->classes[0].devices[0].labels_per_round, 64u);
  EXPECT_EQ(f->classes[0].rounds, 16u);
}

// The plan refuses what once wrapped or overflowed: a 2^64 - 1 us round, a 1e17 margin, an
// infinite fill rate or verify rate; a sub-picosecond GPU step in a node profile is kept.
TEST(PlanCalculatorTest, RefusesOverflowingInputsAndKeepsSubPicosecondSteps) {
  PlanInputs huge = H200Node();
  huge.honest_round_p999_us = UINT64_MAX;
  EXPECT_EQ(ComputeFleetPlan(huge).status().code(), StatusCode::kInvalidArgument);
  PlanInputs margin = H200Node();
  margin.policy.round_margin = 1e17;
  EXPECT_EQ(ComputeFleetPlan(margin).status().code(), StatusCode::kInvalidArgument);
  PlanInputs rate = H200Node();
  rate.devices[0].fill_bytes_per_s = INFINITY;
  EXPECT_EQ(ComputeFleetPlan(rate).status().code(), StatusCode::kInvalidArgument);
  PlanInputs verify = H200Node();
  verify.verify_compressions_per_s_per_core = std::nan("");
  EXPECT_EQ(ComputeFleetPlan(verify).status().code(), StatusCode::kInvalidArgument);

  NodeProfile node;
  NodeDeviceProfile gpu;
  gpu.kind = "cuda";
  gpu.id = "GPU-a";
  gpu.name = "NVIDIA H200";
  gpu.total_bytes = 150754820096ull;
  gpu.fills.push_back({LabelFormat::kC1, 16384, 16ull << 30, 0.2, 4.0, 4.0 * (1ull << 30)});
  gpu.step_ps = 0.5;
  node.devices.push_back(gpu);
  node.host_sequential_compression_ps = 61000;
  auto shape = PlanShapeFromNodeProfile(node, LabelFormat::kC1, 536870912, false, 0, 0);
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  EXPECT_EQ(shape->sequential_compression_ps, 0.5);
  EXPECT_NE(shape->sequential_where.find("GPU-a"), std::string::npos);
  NodeClaims claims = ClaimsFromNodeProfile(node, {{"GPU-a", 16ull << 30, 150754820096ull}}, LabelFormat::kC1, 16384);
  EXPECT_EQ(claims.sequential_compression_ps, 0.5);
}

}  // namespace
}  // namespace wipeproof

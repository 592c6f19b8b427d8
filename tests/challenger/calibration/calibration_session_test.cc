// `calibrate` in process: RunCalibration drives real sessions against a TestAgent
// (real labels, every answer checked) over an in-memory pipe, through a wrapper that injects a
// delay into every round and into the fill on the FakeClock the challenger times with. The derived
// round deadline must sit above the injected round delay and at or below the class's recompute
// floor; the fill deadline follows the injected fill time; a delay no m can cover is refused; the
// node's signed claims only tighten.
#include "challenger/calibration/calibration_session.h"

#include <gtest/gtest.h>
#include <kj/async-io.h>

#include "adversary/relay_agent.h"
#include "challenger/parameters/deadline_rule.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

using testing::TestKey;

constexpr uint32_t kProbeM = 256;

class CalibrationSessionTest : public ::testing::Test {
 protected:
  CalibrationSessionTest() : io_(kj::setupAsyncIo()) {
    // One node, host memory of 64 chunks of 2^10 (2 MiB): holds whole chunks up to m = 2^16.
    InventoryNode node;
    node.name = "node-a";
    node.address = "in-process";
    node.public_key = TestKey(0x33).public_key;
    node.devices.push_back({"host", "host-dram", uint64_t{64} * 1024 * 32});
    inventory_.nodes = {node};
    inventory_.reserve_bytes_by_model = {{"host-dram", 0}};
  }
  ~CalibrationSessionTest() noexcept override {}

  SessionDriver Driver(int64_t fill_us, int64_t round_us, int64_t first_round_extra_us = 0) {
    return [this, fill_us, round_us, first_round_extra_us](const SessionPlan& plan) -> StatusOr<SessionOutcome> {
      // A relay (adversary/relay_agent.h) moves the clock by exactly these times before answering.
      adversary::RelayDelays delays{fill_us, round_us, first_round_extra_us};
      proto::ProverAgent::Client inner =
          testing::TestAgent({}, &log_, &clock_, TestKey(0x33), authority_.public_key, challenger_.public_key);
      testing::PipeConnector pipe(io_, kj::heap<adversary::RelayAgent>(kj::mv(inner), delays, &clock_));
      SessionEnv env;
      env.clock = &clock_;
      env.timer = &io_.provider->getTimer();
      env.wait_scope = &io_.waitScope;
      env.records = &sink_;
      env.threads = 2;
      ++sessions_;
      SessionRunner runner(plan, SessionKeys{authority_, challenger_}, env);
      return runner.Run(pipe);
    };
  }

  CalibrationRequest Request(const AdversaryClass& adversary) {
    CalibrationRequest r;
    r.inventory = &inventory_;
    r.node = "node-a";
    r.policy.adversary = adversary;
    r.policy.labels_per_round = 8;
    // These tests are about deadlines and m: a target the node's 2 MiB reach at every m tried
    // (N = ceil(ln 0.5 / ln 0.5) = 1 chunk; a larger N is refused on too few chunks, tested in
    // calibration_rule_test and calibration_cli_test).
    r.policy.target_fraction = 0.5;
    r.policy.confidence = 0.5;
    r.probe.probe_chunk_labels = kProbeM;
    r.probe.probe_rounds = 300;
    return r;
  }

  kj::AsyncIoContext io_;
  FakeClock clock_;
  Inventory inventory_;
  proto::KeyPair authority_ = TestKey(0x11), challenger_ = TestKey(0x22);
  testing::AgentLog log_;
  testing::MemoryRecordSink sink_;
  int sessions_ = 0;
};

TEST_F(CalibrationSessionTest, DeadlineAboveTheDelayAndBelowTheRecomputeFloor) {
  const AdversaryClass cpu{"commodity-cpu", 40'000, 2.0};
  const AdversaryClass asic{"fpga-asic", 5'000, 2.0};
  for (const AdversaryClass& a : {cpu, asic}) {
    SCOPED_TRACE(a.name);
    const int64_t round_delay_us = 10, fill_delay_us = 3'000'000;
    auto run = RunCalibration(Request(a), Driver(fill_delay_us, round_delay_us), clock_, nullptr);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    // Every probe round took exactly the injected delay on the challenger's clock.
    EXPECT_EQ(run->round_times_us.size(), 300u);
    EXPECT_EQ(run->rounds.p999_us, 10u);
    EXPECT_EQ(run->rounds.min_us, 10u);
    EXPECT_TRUE(run->round_probe.pass) << run->round_probe.failure;
    EXPECT_TRUE(run->fill_probe.pass) << run->fill_probe.failure;
    const Profile& p = run->result.profile;
    EXPECT_TRUE(p.calibrated);
    EXPECT_EQ(p.adversary.name, a.name);
    // Above the delay (by the margin), at or below the class's recompute floor at the chosen m.
    EXPECT_GT(p.round_deadline_us, static_cast<uint64_t>(round_delay_us));
    EXPECT_EQ(p.round_deadline_us, 20u);
    const double floor_ps = RecomputeFloorPs(p.chunk_labels, p.format, a.t_min_ps, a.safety_factor);
    EXPECT_LE(static_cast<double>(p.round_deadline_us) * 1e6, floor_ps);
    // ... and m is the smallest such: half of it would not do. CPU: 30.72 us at 2^10; ASIC: 30.72 us at 2^13.
    EXPECT_GT(static_cast<double>(p.round_deadline_us) * 1e6,
              RecomputeFloorPs(p.chunk_labels / 2, p.format, a.t_min_ps, a.safety_factor));
    EXPECT_EQ(p.chunk_labels, a.name == "commodity-cpu" ? 1024u : 8192u);
    // Fill deadline: the injected fill time (order to report, fake clock) times 1.5.
    EXPECT_EQ(run->fill_probe.fill_us, static_cast<uint64_t>(fill_delay_us));
    EXPECT_EQ(p.fill_deadline_us, 4'500'000u);
    EXPECT_EQ(run->fill_probe.chunk_labels, p.chunk_labels);
    // N = 1: one round of one label.
    EXPECT_EQ(p.rounds, 1u);
    EXPECT_EQ(p.labels_per_round, 1u);
    EXPECT_EQ(p.honest_fill_us, static_cast<uint64_t>(fill_delay_us));
  }
  EXPECT_EQ(sessions_, 4);
}

TEST_F(CalibrationSessionTest, SlowerRoundsRaiseMAndAnUncoverableDelayIsRefused) {
  const AdversaryClass asic{"fpga-asic", 5'000, 2.0};
  auto base = RunCalibration(Request(asic), Driver(1'000'000, 10), clock_, nullptr);
  ASSERT_TRUE(base.ok()) << base.status().ToString();
  // A node that sleeps 4x longer in every round only buys itself a larger m.
  auto slow = RunCalibration(Request(asic), Driver(1'000'000, 40), clock_, nullptr);
  ASSERT_TRUE(slow.ok()) << slow.status().ToString();
  EXPECT_GT(slow->result.profile.chunk_labels, base->result.profile.chunk_labels);
  EXPECT_LE(static_cast<double>(slow->result.profile.round_deadline_us) * 1e6,
            RecomputeFloorPs(slow->result.profile.chunk_labels, LabelFormat::kC1, 5'000, 2.0));
  // 2.5 ms rounds: a 5 ms deadline, above the ASIC floor at 2^20 (3932.16 us): refused after the
  // round probe, before any fill probe.
  const int before = sessions_;
  auto refused = RunCalibration(Request(asic), Driver(1'000'000, 2500), clock_, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("no m up to 2^20"), std::string::npos) << refused.status().ToString();
  EXPECT_EQ(sessions_, before + 1);
  // The authority's cap on m: at 2^16 the ASIC floor is 245.76 us, so 70 us rounds (a 140 us
  // deadline) fit and 150 us rounds (300 us) are refused.
  CalibrationRequest capped = Request(asic);
  capped.policy.max_chunk_labels = 65536;
  EXPECT_TRUE(RunCalibration(capped, Driver(1'000'000, 70), clock_, nullptr).ok());
  EXPECT_EQ(RunCalibration(capped, Driver(1'000'000, 150), clock_, nullptr).status().code(),
            StatusCode::kFailedPrecondition);
}

// threat-model: T-FILL-DEADLINE
TEST_F(CalibrationSessionTest, NodeClaimsOnlyTighten) {
  const AdversaryClass cpu{"commodity-cpu", 40'000, 2.0};
  NodeProfile claims;
  NodeDeviceProfile host;
  host.kind = "host";
  host.id = "host";
  host.total_bytes = uint64_t{64} * 1024 * 32;
  // Claims 2 MiB in 2.5 s at m = 2^10 (the measured fill is 3 s): the deadline tightens to 3.75 s,
  // still 1.25 x the measured fill (it must keep 1.2 x).
  host.fills.push_back({LabelFormat::kC1, 1024, uint64_t{64} * 1024 * 32, 0.0, 2.5, 2.0 * 1024 * 1024 / 2.5});
  claims.devices.push_back(host);
  CalibrationRequest request = Request(cpu);
  request.node_profile = &claims;
  auto tight = RunCalibration(request, Driver(3'000'000, 10), clock_, nullptr);
  ASSERT_TRUE(tight.ok()) << tight.status().ToString();
  EXPECT_EQ(tight->claims.fill_estimate_us, 2'500'000u);
  EXPECT_EQ(tight->result.profile.fill_deadline_us, 3'750'000u);
  // Claims a slower fill (30 s): the deadline stays at the measured 3 s * 1.5.
  claims.devices[0].fills[0].fill_s = 30;
  claims.devices[0].fills[0].bytes_per_s = 64.0 * 1024 * 32 / 30;
  auto loose = RunCalibration(request, Driver(3'000'000, 10), clock_, nullptr);
  ASSERT_TRUE(loose.ok()) << loose.status().ToString();
  EXPECT_EQ(loose->result.profile.fill_deadline_us, 4'500'000u);
  // Claims 1 s but takes 3 s: too slow for its own claim, refused.
  claims.devices[0].fills[0].fill_s = 1;
  claims.devices[0].fills[0].bytes_per_s = 2048.0 * 1024;
  auto refused = RunCalibration(request, Driver(3'000'000, 10), clock_, nullptr);
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition) << refused.status().ToString();
  // Claims 2 s: 3 s would be above the 3 s measured, but below the 1.2 x margin (3.6 s): refused.
  claims.devices[0].fills[0].fill_s = 2;
  claims.devices[0].fills[0].bytes_per_s = 1024.0 * 1024;
  auto thin = RunCalibration(request, Driver(3'000'000, 10), clock_, nullptr);
  EXPECT_EQ(thin.status().code(), StatusCode::kFailedPrecondition) << thin.status().ToString();
  EXPECT_NE(thin.status().message().find("must keep 1.2 x the measured fill"), std::string::npos);
}

TEST_F(CalibrationSessionTest, ASlowFirstRoundIsReportedNotHidden) {
  const AdversaryClass cpu{"commodity-cpu", 40'000, 2.0};
  CalibrationRequest request = Request(cpu);
  request.probe.probe_rounds = 2000;  // p99.9 then leaves two samples above it
  auto run = RunCalibration(request, Driver(1'000'000, 10, 490), clock_, nullptr);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->round_times_us[0], 500u);
  EXPECT_EQ(run->rounds.p999_us, 10u);  // one slow round does not move p99.9 ...
  EXPECT_EQ(run->result.profile.round_deadline_us, 20u);
  bool warned = false;  // ... but calibrate says a session whose first round is as slow fails
  for (const auto& w : run->result.warnings) warned = warned || w.find("first round took 500 us") != std::string::npos;
  EXPECT_TRUE(warned);
}

}  // namespace
}  // namespace wipeproof

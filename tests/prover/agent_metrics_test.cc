// AgentMetrics (prover/agent/agent_metrics.h) fed by a real AgentCore on a fake clock: every refusal
// reason and session outcome counted once, rounds and their lookup times, and the scrape-time state
// (phase, session id, bytes held against planned per device) read from the exposition text.
#include "prover/agent/agent_metrics.h"

#include <capnp/message.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "common/hex.h"
#include "prover/agent/agent_core.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {
namespace {

using agent_test::FillGate;
using agent_test::OrderSpec;
using agent_test::SessionIdOf;
using agent_test::SignedOrder;
using agent_test::SignedVerdict;

constexpr ConnectionId kOwner = 1;
const PeerKeyId kAsChallenger = proto::KeyIdOf(agent_test::ChallengerKey().public_key);
const std::string kHost = "{device=\"host\",uuid=\"\",model=\"host memory\",node=\"node-a\"}";

// Series name with labels -> value, from the exposition text.
std::map<std::string, double> Scrape(const MetricsRegistry& registry) {
  std::map<std::string, double> out;
  std::istringstream in(registry.Render());
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

class AgentMetricsTest : public ::testing::Test {
 protected:
  AgentCore& Make(const FillGate* gate = nullptr) {
    AgentConfig config = agent_test::TestConfig();
    config.metrics = &metrics_;
    core_ = std::make_unique<AgentCore>(config, agent_test::HostBackends(gate), clock_);
    metrics_.CollectFrom(*core_);
    return *core_;
  }
  bool WaitForPhase(proto::AgentPhase phase) {
    for (int i = 0; i < 20000; ++i) {
      if (core_->GetStatus().phase == phase) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  Status AnswerRound(const proto::Bytes& session_id, uint32_t index) {
    capnp::MallocMessageBuilder request;
    capnp::MallocMessageBuilder response;
    auto round = request.initRoot<proto::ChallengeRound>();
    round.setSessionId(proto::AsView(session_id));
    round.setRoundIndex(index);
    auto device = round.initDevices(1)[0];
    device.setDeviceIndex(0);
    auto labels = device.initLabelIndices(2);
    labels.set(0, 3 + index);
    labels.set(1, 40000 + index);
    return core_->AnswerRound(kOwner, round.asReader(), response.initRoot<proto::RoundAnswer>());
  }

  FakeClock clock_;
  MetricsRegistry registry_;
  AgentMetrics metrics_{registry_, agent_test::kNodeName, "test-version"};
  std::unique_ptr<AgentCore> core_;  // destroyed before metrics_
};

TEST_F(AgentMetricsTest, IdleAgentShowsItsDevicesAtZero) {
  Make();
  auto m = Scrape(registry_);
  EXPECT_EQ(m["wipeproof_agent_info{node=\"node-a\",version=\"test-version\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_phase{phase=\"idle\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_phase{phase=\"ready\"}"], 0);
  EXPECT_EQ(m.count("wipeproof_agent_session_info{session_id=\"" + HexEncode(SessionIdOf(1)) + "\"}"), 0u);
  EXPECT_EQ(m["wipeproof_agent_device_total_bytes" + kHost], double(uint64_t{1} << 30));
  EXPECT_EQ(m["wipeproof_agent_device_planned_bytes" + kHost], 0);
  EXPECT_EQ(m["wipeproof_agent_device_bytes_held" + kHost], 0);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"pass\"}"], 0);
  EXPECT_EQ(m["wipeproof_agent_refusals_total{reason=\"busy\"}"], 0);
  EXPECT_EQ(m["wipeproof_agent_last_error_timestamp_seconds"], 0);
}

TEST_F(AgentMetricsTest, SessionStateRoundsAndOutcomes) {
  FillGate gate;
  AgentCore& core = Make(&gate);
  const proto::SignedEnvelope first = SignedOrder(OrderSpec(), clock_);
  auto filling = std::async(std::launch::async, [&] { return core.StartSession(first, kOwner, kAsChallenger); });
  ASSERT_TRUE(WaitForPhase(proto::AgentPhase::FILLING));
  auto m = Scrape(registry_);
  EXPECT_EQ(m["wipeproof_agent_phase{phase=\"filling\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_device_planned_bytes" + kHost], 65536 * 32);
  EXPECT_EQ(m["wipeproof_agent_device_bytes_held" + kHost], 0);  // the gate holds the fill
  EXPECT_EQ(m["wipeproof_agent_fill_progress_ratio"], 0);
  EXPECT_EQ(m["wipeproof_agent_session_info{session_id=\"" + HexEncode(SessionIdOf(1)) + "\"}"], 1);

  // A second order while filling: busy.
  OrderSpec second;
  second.session_id = SessionIdOf(2);
  clock_.Advance(1'000'000);
  EXPECT_FALSE(core.StartSession(SignedOrder(second, clock_), 2, kAsChallenger).ok());
  EXPECT_EQ(Scrape(registry_)["wipeproof_agent_refusals_total{reason=\"busy\"}"], 1);
  EXPECT_EQ(Scrape(registry_)["wipeproof_agent_last_error_timestamp_seconds"], clock_.UnixMicros() / 1e6);

  gate.Open();
  ASSERT_TRUE(filling.get().ok());
  m = Scrape(registry_);
  EXPECT_EQ(m["wipeproof_agent_phase{phase=\"ready\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_device_bytes_held" + kHost], 65536 * 32);
  EXPECT_EQ(m["wipeproof_agent_fill_progress_ratio"], 1);
  ASSERT_TRUE(AnswerRound(SessionIdOf(1), 0).ok());
  ASSERT_TRUE(AnswerRound(SessionIdOf(1), 1).ok());
  ASSERT_TRUE(core.Finish(kOwner, SignedVerdict(first, true)).ok());
  m = Scrape(registry_);
  EXPECT_EQ(m["wipeproof_agent_rounds_answered_total"], 2);
  EXPECT_EQ(m["wipeproof_agent_round_lookup_seconds_count"], 2);
  EXPECT_EQ(m["wipeproof_agent_round_lookup_seconds_bucket{le=\"+Inf\"}"], 2);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"pass\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_phase{phase=\"idle\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_device_bytes_held" + kHost], 0);

  // A failing verdict, an abort, a disconnect: one each.
  const proto::SignedEnvelope failing = SignedOrder(second, clock_);
  ASSERT_TRUE(core.StartSession(failing, kOwner, kAsChallenger).ok());
  ASSERT_TRUE(core.Finish(kOwner, SignedVerdict(failing, false)).ok());
  OrderSpec third;
  third.session_id = SessionIdOf(3);
  ASSERT_TRUE(core.StartSession(SignedOrder(third, clock_), kOwner, kAsChallenger).ok());
  ASSERT_TRUE(core.Abort(kOwner, proto::AsView(third.session_id), "test").ok());
  OrderSpec fourth;
  fourth.session_id = SessionIdOf(4);
  ASSERT_TRUE(core.StartSession(SignedOrder(fourth, clock_), kOwner, kAsChallenger).ok());
  core.OnDisconnect(kOwner);
  ASSERT_TRUE(core.WaitUntilIdle(20'000'000));
  m = Scrape(registry_);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"pass\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"fail\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"aborted\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"disconnected\"}"], 1);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"error\"}"], 0);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"timed_out\"}"], 0);
}

TEST_F(AgentMetricsTest, EachRefusalCountsUnderItsReason) {
  AgentCore& core = Make();
  auto refused = [&](const OrderSpec& spec, const proto::KeyPair& signer) {
    return !core.StartSession(SignedOrder(spec, clock_, signer), kOwner, kAsChallenger).ok();
  };
  const proto::KeyPair challenger = agent_test::ChallengerKey();
  OrderSpec spec;
  spec.session_id = SessionIdOf(10);
  EXPECT_TRUE(refused(spec, agent_test::AuthorityKey()));  // signature: not the challenger's
  spec.delegation = agent_test::TestDelegation();
  spec.delegation[spec.delegation.size() / 2] ^= 1;
  EXPECT_TRUE(refused(spec, challenger));  // delegation: altered
  spec = OrderSpec();
  spec.session_id = SessionIdOf(10);
  spec.node_name = "node-z";
  EXPECT_TRUE(refused(spec, challenger));  // address
  spec = OrderSpec();
  spec.session_id = SessionIdOf(11);
  spec.issued_at_unix_us = clock_.UnixMicros() + 2 * kDefaultClockSkewUs;
  EXPECT_TRUE(refused(spec, challenger));  // order_time: from the future
  spec = OrderSpec();
  spec.session_id = SessionIdOf(12);
  spec.devices = {{"GPU-nope", 0, 1024, 1}};
  EXPECT_TRUE(refused(spec, challenger));  // devices
  EXPECT_TRUE(refused(spec, challenger));  // replayed: its id was used up
  auto m = Scrape(registry_);
  for (const char* reason : {"signature", "delegation", "address", "order_time", "devices", "replayed"}) {
    EXPECT_EQ(m[std::string("wipeproof_agent_refusals_total{reason=\"") + reason + "\"}"], 1) << reason;
  }
  EXPECT_EQ(m["wipeproof_agent_refusals_total{reason=\"busy\"}"], 0);
  EXPECT_EQ(m["wipeproof_agent_sessions_total{outcome=\"error\"}"], 0);  // a refusal is no session
}

}  // namespace
}  // namespace wipeproof

// Sessions over real loopback TCP sockets and TLS 1.3: RunTcpSession (wipe --node) and RunWave
// (serve) against cheating agents (adversary/) served from their own threads, with the system clock;
// the challenger refuses to talk to an agent that is not the node whose certificate it pins, or to a
// node without a pinned certificate. (The smoke test with the real wipeproof-prover binary lives
// with the agent.)
#include <capnp/message.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <chrono>
#include <optional>
#include <thread>

#include "challenger/fleet/fleet_metrics.h"
#include "challenger/fleet/outcome_report.h"
#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
#include "challenger/session/wave_verdict.h"
#include "proto/codec.h"
#include "tests/support/challenger_fixtures.h"

namespace wipeproof {
namespace {

Profile TcpProfile() {
  Profile p = testing::TestProfile();
  p.rounds = 8;
  p.round_deadline_us = 500'000;  // loopback on a shared machine: generous
  return p;
}

// Preparing a session (challenges and expected labels, before any order) may take longer than the
// connect timeout: the timeout counts from the connect, not from when the event loop last turned.
TEST(TcpSessionTest, APreparationLongerThanTheConnectTimeoutStillConnects) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.waves.clear();
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), LoneSessionWaveContext(inventory, "node-a"), SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  TcpSessionOptions options = testing::TcpTestOptions();
  options.connect_timeout_us = 300'000;
  options.prepare_test_delay_us = 600'000;
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->pass) << outcome->failure.Describe();
  EXPECT_GE(outcome->prepare_us, 600'000u);
}

TEST(TcpSessionTest, HonestAgentPassesOverLoopback) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.waves.clear();
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), LoneSessionWaveContext(inventory, "node-a"), SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_TRUE(outcome->pass) << outcome->failure.Describe();
  EXPECT_GE(outcome->rounds.size(), 9u);  // 8 proof rounds, then holding rounds until done
  for (const RoundRecord& r : outcome->rounds) EXPECT_GT(r.elapsed_us, 0u);
  EXPECT_GT(outcome->fill_us, 0u);
  EXPECT_TRUE(outcome->transcript.has_value());
  // order, a fill notice per device (2), report, round log, verdict, transcript, receipt
  EXPECT_EQ(sink.records().size(), 8u);
  // Sizes for people beside the byte counts: the share of the plan each device held.
  const std::string summary = OutcomeSummary(*outcome, "ledger.db");
  EXPECT_NE(summary.find(" planned ("), std::string::npos) << summary;
  EXPECT_NE(summary.find(", 100.0% of planned; capacity "), std::string::npos) << summary;
}

// An agent running another session refuses the order with the real agent's typed refusal (BUSY,
// agent_core.cc, checked in agent_core_test): the node is reported busy in the summary, the JSON and
// the serve metrics' outcome, as a failed wipe (nodeBusy); its failing verdict is recorded.
// threat-model: T-BUSY-FOREVER
TEST(TcpSessionTest, AnAgentRefusingAsBusyIsAFailedWipeShownBusy) {
  testing::Deviation busy;
  busy.kind = testing::DeviationKind::kAlwaysBusy;
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), busy);
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.waves.clear();
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), LoneSessionWaveContext(inventory, "node-a"), SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  auto outcome = RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr,
                               testing::TcpTestOptions());
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::NODE_BUSY);
  EXPECT_TRUE(IsBusyRefusal(*outcome));
  EXPECT_STREQ(OutcomeName(*outcome), "busy");
  const std::string summary = OutcomeSummary(*outcome, "ledger.db");
  EXPECT_NE(summary.find("  BUSY\nbusy: node node-a refused the order, saying it runs another session; this "
                         "challenger has none there, so nothing was wiped: counted as a failed wipe"),
            std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("  FAIL\n"), std::string::npos) << summary;
  const auto json = OutcomeJson(*outcome, "ledger.db");
  EXPECT_EQ(json["pass"], false);
  EXPECT_EQ(json["outcome"], "busy");
  EXPECT_EQ(json["failure"]["reason"], "nodeBusy");
  // The order and the failing verdict are on record.
  ASSERT_GE(sink.records().size(), 2u);
  EXPECT_EQ(sink.records()[0].kind, proto::LedgerRecordKind::ORDER);
  EXPECT_STREQ(FleetMetrics::OutcomeOf(WaveMemberResult{"node-a", *std::move(outcome)}), "busy");

  // Any other refusal is a failed wipe.
  auto refusing = testing::ServeTestAgent(testing::TestKey(0x33), testing::Cheat(testing::DeviationKind::kRefuseOrder));
  inventory.nodes[0].address = refusing->address();
  plan = BuildPlan(inventory, "node-a", TcpProfile(), LoneSessionWaveContext(inventory, "node-a"), SystemClock());
  ASSERT_TRUE(plan.ok());
  auto refused = RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr,
                               testing::TcpTestOptions());
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_FALSE(IsBusyRefusal(*refused));
  EXPECT_STREQ(OutcomeName(*refused), "fail");
  EXPECT_EQ(OutcomeJson(*refused, "ledger.db")["outcome"], "fail");
  EXPECT_NE(OutcomeSummary(*refused, "ledger.db").find("  FAIL\n"), std::string::npos);
}

TEST(TcpSessionTest, UnreachableAgentIsRecordedAsDisconnected) {
  // Bind a port and close it again, so nothing listens there.
  uint16_t port;
  {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    port = static_cast<uint16_t>(
        io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope)->listen()->getPort());
  }
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = "127.0.0.1:" + std::to_string(port);
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), {}, SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::DISCONNECTED);
  EXPECT_NE(outcome->failure.text.find("cannot connect"), std::string::npos) << outcome->failure.text;
  // The order and the failed verdict are on record.
  ASSERT_EQ(sink.records().size(), 4u);
  EXPECT_EQ(sink.records()[0].kind, proto::LedgerRecordKind::ORDER);
  EXPECT_EQ(sink.records()[2].kind, proto::LedgerRecordKind::VERDICT);
}

// A wave whose members' round deadline is longer than the inventory's reach_round_deadline_us:
// both members pass, but neither order says waveComplete and the wave verdict is not complete.
// threat-model: T-REACH-DEADLINE
TEST(TcpSessionTest, AWaveRunBeyondItsReachIsNotComplete) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  Inventory inventory = testing::TestInventoryAt(*a, *b);
  ASSERT_TRUE(inventory.waves[0].complete);
  inventory.reach_round_deadline_us = TcpProfile().round_deadline_us - 1;
  testing::MemoryRecordSink sink;
  std::optional<proto::SignedEnvelope> wave_verdict;
  auto results =
      RunWave(inventory, inventory.waves[0], TcpProfile(), SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)},
              sink, testing::TcpTestOptions(), &wave_verdict);
  ASSERT_EQ(results.size(), 2u);
  for (const WaveMemberResult& r : results) {
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.status().ToString();
    EXPECT_TRUE(r.outcome->pass) << r.node << ": " << r.outcome->failure.Describe();
    auto order = proto::ParseMessage<proto::WipeOrder>(proto::AsView(r.outcome->order.payload));
    ASSERT_TRUE(order.ok());
    EXPECT_FALSE(order->root().getWaveComplete()) << r.node;
  }
  ASSERT_TRUE(wave_verdict.has_value());
  auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*wave_verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(wave.ok()) << wave.status().ToString();
  EXPECT_FALSE(wave->root().getComplete());
  EXPECT_TRUE(wave->root().getPass());
}

// threat-model: T-WAVE-VERDICT
TEST(TcpSessionTest, WaveRunWipesAllNodesTogether) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44), testing::BlankChunks());
  const Inventory inventory = testing::TestInventoryAt(*a, *b);
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  std::optional<proto::SignedEnvelope> wave_verdict;
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options, &wave_verdict);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  ASSERT_TRUE(results[1].outcome.ok()) << results[1].outcome.status().ToString();
  EXPECT_EQ(results[0].node, "node-a");

  // The wave's own verdict: signed, filed under no session, naming both members' verdicts; a fail,
  // as node-b failed. Recomputed from the member verdicts it holds; a pass forged over them is not.
  ASSERT_TRUE(wave_verdict.has_value());
  auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*wave_verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(wave.ok()) << wave.status().ToString();
  EXPECT_FALSE(wave->root().getPass());
  EXPECT_FALSE(wave->root().getBoundStated());
  ASSERT_EQ(wave->root().getNodeNames().size(), 2u);
  EXPECT_EQ(std::string(wave->root().getNodeNames()[1].cStr()), "node-b");
  EXPECT_EQ(std::string(wave->root().getStatement().cStr()), "no bound for wave wave-1: node node-b failed");
  EXPECT_EQ(sink.records().back().kind, proto::LedgerRecordKind::WAVE_VERDICT);
  EXPECT_TRUE(sink.records().back().session_id.empty());
  EXPECT_EQ(sink.records().back().bytes, proto::EncodeEnvelope(*wave_verdict));
  std::vector<proto::Parsed<proto::Verdict>> members;
  std::vector<proto::Verdict::Reader> readers;
  for (const WaveMemberResult& r : results) {
    auto v = proto::VerifyAndParse<proto::Verdict>(r.outcome->verdict, testing::TestKey(0x22).public_key);
    ASSERT_TRUE(v.ok());
    members.push_back(std::move(v).value());
  }
  for (auto& m : members) readers.push_back(m.root());
  EXPECT_TRUE(RecheckWaveVerdict(wave->root(), readers).ok());
  capnp::MallocMessageBuilder forged;
  forged.setRoot(wave->root());
  forged.getRoot<proto::WaveVerdict>().setPass(true);
  Status caught = RecheckWaveVerdict(forged.getRoot<proto::WaveVerdict>().asReader(), readers);
  EXPECT_EQ(caught.code(), StatusCode::kDataLoss) << caught.ToString();
  // Nor a wave of no members, one member twice, or a bound-like statement for a wave not complete.
  capnp::MallocMessageBuilder empty;
  empty.setRoot(wave->root());
  auto e = empty.getRoot<proto::WaveVerdict>();
  e.initSessionIds(0);
  e.initNodeNames(0);
  e.initVerdictDigests(0);
  e.setPass(true);
  EXPECT_EQ(RecheckWaveVerdict(e.asReader(), {}).code(), StatusCode::kDataLoss);
  EXPECT_EQ(RecheckWaveVerdict(wave->root(), {readers[0], readers[0]}).code(), StatusCode::kDataLoss);
  capnp::MallocMessageBuilder worded;
  worded.setRoot(wave->root());
  worded.getRoot<proto::WaveVerdict>().setStatement("at 99% confidence at most 0 bytes of wave wave-1 were not wiped");
  EXPECT_EQ(RecheckWaveVerdict(worded.getRoot<proto::WaveVerdict>().asReader(), readers).code(), StatusCode::kDataLoss);
  // Nor another confidence than the members' (it is signed beside the bound and read with it).
  capnp::MallocMessageBuilder sure;
  sure.setRoot(wave->root());
  sure.getRoot<proto::WaveVerdict>().setConfidence(0.999999);
  EXPECT_EQ(RecheckWaveVerdict(sure.getRoot<proto::WaveVerdict>().asReader(), readers).code(), StatusCode::kDataLoss);
  // A wave not complete gives one of SignWaveVerdict's two reasons, word for word: not complete, or a
  // node it does not list that has no verdict; claim-like words after the prefix fail.
  auto incomplete = [&](const std::string& statement) {
    capnp::MallocMessageBuilder m;
    m.setRoot(wave->root());
    auto w = m.getRoot<proto::WaveVerdict>();
    w.setComplete(false);
    w.setConfidence(0);
    w.setStatement(statement);
    return RecheckWaveVerdict(w.asReader(), readers);
  };
  EXPECT_TRUE(incomplete("no bound for wave wave-1: the wave is not complete (not every node of it was in the run, "
                         "or the inventory does not declare it complete)")
                  .ok());
  EXPECT_TRUE(incomplete("no bound for wave wave-1: node node-c has no verdict").ok());
  EXPECT_EQ(incomplete("no bound for wave wave-1: node node-b has no verdict").code(), StatusCode::kDataLoss);
  EXPECT_EQ(incomplete("no bound for wave wave-1: at 99% confidence at most 0 bytes were not wiped").code(),
            StatusCode::kDataLoss);
  EXPECT_TRUE(results[0].outcome->pass) << results[0].outcome->failure.Describe();
  EXPECT_EQ(results[1].outcome->failure.reason, proto::FailureReason::WRONG_LABEL);
  // node-b cheated, so a member of node-a's wave run failed a round it was sent.
  for (const AssumptionResult& r : results[0].outcome->summary.assumptions) {
    if (r.name == kWaveComplete) {
      EXPECT_FALSE(r.held);
      EXPECT_NE(r.detail.find("node-b"), std::string::npos) << r.detail;
    }
  }
}

// An agent that cannot prove it holds the key of the certificate pinned for the node (here the
// node's inventory entry pins node-b's certificate, and the agent at its address holds node-a's
// key) is reported as a failed connection naming why, and gets no call, the order least of all: the
// challenger checks the agent's certificate as its side of the handshake ends, before any message.
// threat-model: T-IMPOSTOR-AGENT
TEST(TcpSessionTest, AnAgentThatIsNotThePinnedNodeIsRefused) {
  testing::AgentLog log;
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33), {}, testing::TestKeyPublic(0x11),
                                       testing::TestCertificate(0x22), &log);
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.nodes[0].certificate = testing::TestCertificate(0x44);
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), {}, SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::DISCONNECTED);
  const std::string& text = outcome->failure.text;
  EXPECT_NE(text.find("cannot connect to the agent at " + agent->address() + ": TLS handshake failed"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("pinned certificate " + testing::TestCertificate(0x44).name), std::string::npos) << text;
  EXPECT_NE(text.find("not trusted"), std::string::npos) << text;
  agent.reset();  // joins the agent's thread: its log is complete
  EXPECT_EQ(log.orders, 0);
  ASSERT_EQ(sink.records().size(), 4u);  // the order, never delivered, and the failed verdict
}

// Without a pinned certificate there is no session: no plaintext fallback.
// threat-model: T-IMPOSTOR-AGENT
TEST(TcpSessionTest, ANodeWithoutAPinnedCertificateIsNotConnectedTo) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.nodes[0].certificate = {};
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), {}, SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::DISCONNECTED);
  EXPECT_NE(outcome->failure.text.find("no certificate is pinned for this node (inventory: certificate_file)"),
            std::string::npos)
      << outcome->failure.text;
  EXPECT_EQ(agent->connections(), 0);
}

// A challenger whose key the agent does not pin completes no call either (the agent's side of the
// same pinning): its session fails without the agent taking anything.
// threat-model: T-UNPINNED-CLIENT
TEST(TcpSessionTest, AChallengerTheAgentDoesNotPinIsRefused) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), {}, SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x55)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::DISCONNECTED) << outcome->failure.Describe();
  EXPECT_EQ(agent->connections(), 0);
}

// serve prepares a wave's next run ahead of its time (challenges and expected labels before any
// order): run 1.5 s later, past the 1 s order validity the profile gives, its orders are still
// valid (they are signed and their validity starts when they go out) and the wave passes.
TEST(TcpSessionTest, AWavePreparedAheadRunsLaterWithFreshOrders) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44));
  const Inventory inventory = testing::TestInventoryAt(*a, *b);
  Profile profile = TcpProfile();
  profile.order_ttl_us = 1'000'000;
  testing::MemoryRecordSink sink;
  const TcpSessionOptions options = testing::TcpTestOptions();
  PreparedWave prepared = PrepareWave(inventory, inventory.waves[0], profile, options);
  ASSERT_EQ(prepared.sessions.size(), 2u);
  ASSERT_TRUE(prepared.whole);
  EXPECT_GT(prepared.ExpectedLabelBytes(), 0u);
  EXPECT_TRUE(sink.records().empty());  // nothing sent or recorded while preparing
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::optional<proto::SignedEnvelope> wave_verdict;
  auto results =
      RunPreparedWave(std::move(prepared), inventory.waves[0],
                      SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options, &wave_verdict);
  ASSERT_EQ(results.size(), 2u);
  for (const WaveMemberResult& r : results) {
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.status().ToString();
    EXPECT_TRUE(r.outcome->pass) << r.outcome->failure.Describe();
  }
  ASSERT_TRUE(wave_verdict.has_value());
  auto wave = proto::VerifyAndParse<proto::WaveVerdict>(*wave_verdict, testing::TestKey(0x22).public_key);
  ASSERT_TRUE(wave.ok());
  EXPECT_TRUE(wave->root().getPass());
}

}  // namespace
}  // namespace wipeproof

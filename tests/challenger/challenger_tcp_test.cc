// Sessions over real loopback TCP sockets and TLS 1.3: RunTcpSession (wipe --node) and RunWave
// (serve) against cheating agents (adversary/) served from their own threads, with the system clock;
// the challenger refuses to talk to an agent that is not the node whose certificate it pins, or to a
// node without a pinned certificate. (The smoke test with the real wipeproof-prover binary lives
// with the agent.)
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include "challenger/fleet/plan_builder.h"
#include "challenger/fleet/wave_run.h"
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

TEST(TcpSessionTest, HonestAgentPassesOverLoopback) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.waves.clear();
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), LoneSessionWaveContext(inventory, "node-a"), SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  TcpSessionOptions options;
  options.clock = &SystemClock();
  options.threads = 1;
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
  TcpSessionOptions options;
  options.clock = &SystemClock();
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

TEST(TcpSessionTest, WaveRunWipesAllNodesTogether) {
  auto a = testing::ServeTestAgent(testing::TestKey(0x33));
  auto b = testing::ServeTestAgent(testing::TestKey(0x44), testing::BlankChunks());
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = a->address();
  inventory.nodes[1].address = b->address();
  testing::MemoryRecordSink sink;
  TcpSessionOptions options;
  options.clock = &SystemClock();
  options.threads = 1;
  auto results = RunWave(inventory, inventory.waves[0], TcpProfile(),
                         SessionKeys{testing::TestKey(0x11), testing::TestKey(0x22)}, sink, options);
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].outcome.ok()) << results[0].outcome.status().ToString();
  ASSERT_TRUE(results[1].outcome.ok()) << results[1].outcome.status().ToString();
  EXPECT_EQ(results[0].node, "node-a");
  EXPECT_TRUE(results[0].outcome->pass) << results[0].outcome->failure.Describe();
  EXPECT_EQ(results[1].outcome->failure.reason, proto::FailureReason::WRONG_LABEL);
  // node-b cheated, so node-a's wave did not hold labels throughout.
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
  TcpSessionOptions options;
  options.clock = &SystemClock();
  options.threads = 1;
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
TEST(TcpSessionTest, ANodeWithoutAPinnedCertificateIsNotConnectedTo) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  inventory.nodes[0].certificate = {};
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), {}, SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  TcpSessionOptions options;
  options.clock = &SystemClock();
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
TEST(TcpSessionTest, AChallengerTheAgentDoesNotPinIsRefused) {
  auto agent = testing::ServeTestAgent(testing::TestKey(0x33));
  Inventory inventory = testing::TestInventory();
  inventory.nodes[0].address = agent->address();
  auto plan = BuildPlan(inventory, "node-a", TcpProfile(), {}, SystemClock());
  ASSERT_TRUE(plan.ok());
  testing::MemoryRecordSink sink;
  TcpSessionOptions options;
  options.clock = &SystemClock();
  auto outcome =
      RunTcpSession(*plan, SessionKeys{testing::TestKey(0x11), testing::TestKey(0x55)}, sink, nullptr, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  EXPECT_FALSE(outcome->pass);
  EXPECT_EQ(outcome->failure.reason, proto::FailureReason::DISCONNECTED) << outcome->failure.Describe();
  EXPECT_EQ(agent->connections(), 0);
}

}  // namespace
}  // namespace wipeproof

// The agent over Cap'n Proto RPC (prover/agent/agent_rpc_server.h): in process over in-memory pipes
// (style.md 10) with a fake clock, and one session over real loopback TCP. Covers what only the RPC
// layer can get wrong: status answered during a fill, typed errors across the wire, a connection
// dropped mid-fill or a cancelled call freeing memory, oversized messages, the timeout timer.
#include <capnp/message.h>
#include <capnp/rpc-twoparty.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <cstring>
#include <functional>
#include <vector>

#include "proto/rpc_status.h"
#include "proto/transcript.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_rpc_server.h"
#include "tests/agent_test_util.h"

namespace wipeproof {
namespace {

using agent_test::FillGate;
using agent_test::kMiB;
using agent_test::LiveBytes;
using agent_test::OrderSpec;
using agent_test::SignedOrder;
using agent_test::SignedVerdict;

// One challenger-side connection to the agent.
class Client {
 public:
  Client(kj::Own<kj::AsyncIoStream> stream, capnp::ReaderOptions options = proto::RpcReaderOptions())
      : stream_(kj::mv(stream)),
        network_(kj::heap<capnp::TwoPartyVatNetwork>(*stream_, capnp::rpc::twoparty::Side::CLIENT, options)),
        rpc_(kj::heap<capnp::RpcSystem<capnp::rpc::twoparty::VatId>>(capnp::makeRpcClient(*network_))) {
    capnp::MallocMessageBuilder vat;
    vat.initRoot<capnp::rpc::twoparty::VatId>().setSide(capnp::rpc::twoparty::Side::SERVER);
    agent = rpc_->bootstrap(vat.getRoot<capnp::rpc::twoparty::VatId>()).castAs<proto::ProverAgent>();
  }
  ~Client() noexcept(false) { Drop(); }

  // Closes the connection (as a challenger that crashed would).
  void Drop() {
    agent = nullptr;
    rpc_ = nullptr;
    network_ = nullptr;
    stream_ = nullptr;
  }

  proto::ProverAgent::Client agent = nullptr;

 private:
  kj::Own<kj::AsyncIoStream> stream_;
  kj::Own<capnp::TwoPartyVatNetwork> network_;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc_;
};

class AgentRpcTest : public ::testing::Test {
 protected:
  AgentRpcTest() : io_(kj::setupAsyncIo()) {}
  ~AgentRpcTest() noexcept override {}

  void SetUp() override { base_live_ = LiveBytes(); }
  void TearDown() override {
    server_ = nullptr;
    core_.reset();
    EXPECT_EQ(LiveBytes(), base_live_) << "device memory still held after the agent stopped";
  }

  void Start(BackendSet backends, AgentConfig config = agent_test::TestConfig()) {
    core_ = std::make_unique<AgentCore>(std::move(config), std::move(backends), clock_);
    AgentRpcServerOptions options;
    options.timeout_check_interval_us = 1000;
    server_ = kj::heap<AgentRpcServer>(*core_, *io_.provider, options);
  }

  kj::Own<Client> Connect(capnp::ReaderOptions options = proto::RpcReaderOptions()) {
    auto pipe = io_.provider->newTwoWayPipe();
    server_->Accept(kj::mv(pipe.ends[0]));
    return kj::heap<Client>(kj::mv(pipe.ends[1]), options);
  }

  // Runs the event loop until `done()` or 20 s.
  bool SpinUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 20000; ++i) {
      if (done()) return true;
      io_.provider->getTimer().afterDelay(1 * kj::MILLISECONDS).wait(io_.waitScope);
    }
    return done();
  }

  void ExpectNothingHeld() {
    ASSERT_TRUE(SpinUntil([&] { return core_->GetStatus().phase == proto::AgentPhase::IDLE; }));
    EXPECT_EQ(core_->GetStatus().bytes_acquired, 0u);
    EXPECT_EQ(LiveBytes(), base_live_);
  }

  template <typename Promise>
  static Status ErrorOf(Promise&& promise, kj::WaitScope& scope) {
    try {
      promise.wait(scope);
      return Status::Ok();
    } catch (const kj::Exception& e) {
      return proto::ExceptionToStatus(e);
    }
  }

  static capnp::Request<proto::ProverAgent::StartSessionParams, proto::ProverAgent::StartSessionResults> StartRequest(
      Client& client, const proto::SignedEnvelope& order) {
    auto request = client.agent.startSessionRequest();
    proto::WriteEnvelope(order, request.initOrder());
    return request;
  }

  static void BuildRound(proto::ChallengeRound::Builder round, const proto::Bytes& session_id, uint32_t index,
                         const std::vector<uint64_t>& indices) {
    round.setSessionId(proto::AsView(session_id));
    round.setRoundIndex(index);
    auto device = round.initDevices(1)[0];
    device.setDeviceIndex(0);
    auto list = device.initLabelIndices(static_cast<unsigned>(indices.size()));
    for (size_t i = 0; i < indices.size(); ++i) list.set(static_cast<unsigned>(i), indices[i]);
  }

  proto::AgentPhase PhaseOverRpc(Client& client) {
    return client.agent.statusRequest().send().wait(io_.waitScope).getStatus().getPhase();
  }

  kj::AsyncIoContext io_;
  FakeClock clock_;
  std::unique_ptr<AgentCore> core_;
  kj::Own<AgentRpcServer> server_;
  uint64_t base_live_ = 0;
};

TEST_F(AgentRpcTest, HonestSessionWhileStatusKeepsAnswering) {
  FillGate gate;
  Start(agent_test::HostBackends(&gate));
  auto client = Connect();
  auto observer = Connect();
  OrderSpec spec;
  spec.rounds = 2;
  const proto::SignedEnvelope order = SignedOrder(spec, clock_);
  auto pending = StartRequest(*client, order).send();

  // The fill is held at the gate: the event loop still answers status, on both connections.
  ASSERT_TRUE(SpinUntil([&] { return gate.waiting() > 0; }));
  EXPECT_EQ(PhaseOverRpc(*observer), proto::AgentPhase::FILLING);
  auto status = client->agent.statusRequest().send().wait(io_.waitScope).getStatus();
  EXPECT_EQ(status.getPhase(), proto::AgentPhase::FILLING);
  EXPECT_TRUE(status.getSessionId() == proto::AsView(spec.session_id));
  EXPECT_EQ(status.getDevices()[0].getLabelCount(), 65536u);
  gate.Open();
  auto response = pending.wait(io_.waitScope);
  auto report = proto::VerifyAndParse<proto::FillReport>(response.getReport(), agent_test::NodeKey().public_key);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(PhaseOverRpc(*observer), proto::AgentPhase::READY);

  proto::TranscriptHasher challenger;
  ASSERT_TRUE(challenger.AddOrder(proto::AsView(order.payload)).ok());
  auto report_env = proto::DecodeEnvelope(response.getReport());
  ASSERT_TRUE(report_env.ok());
  ASSERT_TRUE(challenger.AddReport(proto::AsView(report_env->payload)).ok());
  const auto expected = agent_test::ExpectedLabels(256, 0, 65536);
  for (uint32_t r = 0; r < 2; ++r) {
    std::vector<uint64_t> indices = {3 + r, 1000 + r, 40000 + r, 65535 - r};
    capnp::MallocMessageBuilder sent;
    BuildRound(sent.initRoot<proto::ChallengeRound>(), spec.session_id, r, indices);
    auto request = client->agent.roundRequest();
    request.setRound(sent.getRoot<proto::ChallengeRound>().asReader());
    auto answer_response = request.send().wait(io_.waitScope);
    auto answer = answer_response.getAnswer();
    ASSERT_EQ(answer.getLabels().size(), indices.size() * 32);
    for (size_t i = 0; i < indices.size(); ++i) {
      EXPECT_EQ(0, std::memcmp(answer.getLabels().begin() + 32 * i, expected.data() + 32 * indices[i], 32));
    }
    ASSERT_TRUE(challenger.AddRound(sent.getRoot<proto::ChallengeRound>().asReader(), answer).ok());
  }
  auto finish = client->agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  auto finished = finish.send().wait(io_.waitScope);
  auto transcript =
      proto::VerifyAndParse<proto::TranscriptDigest>(finished.getTranscript(), agent_test::NodeKey().public_key);
  ASSERT_TRUE(transcript.ok()) << transcript.status().ToString();
  auto digest = challenger.Finish();
  ASSERT_TRUE(digest.ok());
  EXPECT_TRUE(transcript->root().getDigest() == proto::AsView(*digest));
  EXPECT_EQ(PhaseOverRpc(*observer), proto::AgentPhase::IDLE);
  EXPECT_EQ(observer->agent.statusRequest().send().wait(io_.waitScope).getStatus().getSessionsCompleted(), 1u);
  ExpectNothingHeld();

  auto described = observer->agent.describeRequest().send().wait(io_.waitScope).getDescription();
  EXPECT_EQ(described.getProtocolVersion(), proto::PROTOCOL_VERSION);
  EXPECT_EQ(std::string(described.getDevices()[0].getStableId().cStr()), "host");
  EXPECT_NE(std::string(described.getDevices()[1].getDisabledReason().cStr()).find("hip: disabled"), std::string::npos);
}

TEST_F(AgentRpcTest, RefusalsArriveAsTypedStatus) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  proto::SignedEnvelope tampered = order;
  tampered.payload[16] ^= 0x80;
  Status s = ErrorOf(StartRequest(*client, tampered).send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("signature does not verify"), std::string::npos) << s.ToString();

  ASSERT_TRUE(ErrorOf(StartRequest(*client, order).send(), io_.waitScope).ok());
  OrderSpec second;
  second.session_id = agent_test::SessionIdOf(2);
  s = ErrorOf(StartRequest(*client, SignedOrder(second, clock_)).send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("in progress (ready)"), std::string::npos) << s.ToString();

  // A malformed envelope is refused before the core sees it.
  auto request = client->agent.startSessionRequest();
  request.initOrder().setKind(proto::MessageKind::WIPE_ORDER);
  s = ErrorOf(request.send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();

  // An out-of-range index: typed error, and the session is over.
  auto round = client->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {70000});
  s = ErrorOf(round.send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("label index 70000 is outside its range"), std::string::npos) << s.ToString();
  ExpectNothingHeld();
}

TEST_F(AgentRpcTest, ConnectionDroppedMidFillFreesTheMemory) {
  FillGate gate;
  Start(agent_test::HostBackends(&gate));
  auto client = Connect();
  auto observer = Connect();
  auto pending = StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send();
  ASSERT_TRUE(SpinUntil([&] { return gate.waiting() > 0; }));
  EXPECT_GE(core_->GetStatus().bytes_acquired, 2 * kMiB);
  pending = nullptr;
  client->Drop();
  ExpectNothingHeld();
  auto status = observer->agent.statusRequest().send().wait(io_.waitScope).getStatus();
  EXPECT_NE(std::string(status.getLastError().cStr()).find("the challenger disconnected"), std::string::npos)
      << status.getLastError().cStr();
}

TEST_F(AgentRpcTest, ConnectionDroppedWhenReadyFreesTheMemory) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  EXPECT_EQ(core_->GetStatus().phase, proto::AgentPhase::READY);
  client->Drop();
  ExpectNothingHeld();
}

TEST_F(AgentRpcTest, CancelledStartSessionCallEndsTheSession) {
  // The challenger gives up on the call but keeps the connection: nobody will receive the report,
  // so the session ends as soon as the fill does.
  FillGate gate;
  Start(agent_test::HostBackends(&gate));
  auto client = Connect();
  auto pending = StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send();
  ASSERT_TRUE(SpinUntil([&] { return gate.waiting() > 0; }));
  pending = nullptr;
  io_.provider->getTimer().afterDelay(10 * kj::MILLISECONDS).wait(io_.waitScope);
  gate.Open();
  ExpectNothingHeld();
  EXPECT_EQ(PhaseOverRpc(*client), proto::AgentPhase::IDLE);
}

TEST_F(AgentRpcTest, MessageOverTheRpcLimitDropsTheConnectionAndFreesTheMemory) {
  Start(agent_test::HostBackends());
  capnp::ReaderOptions big = proto::RpcReaderOptions();
  big.traversalLimitInWords = 4 * proto::kMaxRpcMessageBytes / 8;  // so this client may send it
  auto client = Connect(big);
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  auto round = client->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0,
             std::vector<uint64_t>(proto::kMaxRpcMessageBytes / 8 + 1024, 1));
  Status s = ErrorOf(round.send(), io_.waitScope);
  EXPECT_FALSE(s.ok());
  ExpectNothingHeld();
  EXPECT_EQ(server_->connections(), 0u);
}

TEST_F(AgentRpcTest, RoundOverItsTypeLimitIsRefusedAndEndsTheSession) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  auto round = client->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0,
             std::vector<uint64_t>(proto::kMaxChallengeRoundBytes / 8 + 1024, 1));
  Status s = ErrorOf(round.send(), io_.waitScope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  ExpectNothingHeld();
  EXPECT_EQ(server_->connections(), 1u);  // the connection stays; the session is over
}

TEST_F(AgentRpcTest, OtherConnectionsCannotDriveOrEndTheSession) {
  Start(agent_test::HostBackends());
  auto owner = Connect();
  auto other = Connect();
  ASSERT_TRUE(ErrorOf(StartRequest(*owner, SignedOrder(OrderSpec(), clock_)).send(), io_.waitScope).ok());
  auto round = other->agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {5});
  EXPECT_EQ(ErrorOf(round.send(), io_.waitScope).code(), StatusCode::kPermissionDenied);
  other->Drop();
  ASSERT_TRUE(SpinUntil([&] { return server_->connections() == 1; }));
  EXPECT_EQ(PhaseOverRpc(*owner), proto::AgentPhase::READY);
  // Abort needs only the session id.
  auto abort = owner->agent.abortRequest();
  abort.setSessionId(proto::AsView(agent_test::SessionIdOf(1)));
  abort.setReason("challenger gave up");
  abort.send().wait(io_.waitScope);
  ExpectNothingHeld();
}

TEST_F(AgentRpcTest, SessionTimeoutFromTheServerTimer) {
  Start(agent_test::HostBackends());
  auto client = Connect();
  OrderSpec spec;
  spec.session_timeout_us = 60'000'000;
  ASSERT_TRUE(ErrorOf(StartRequest(*client, SignedOrder(spec, clock_)).send(), io_.waitScope).ok());
  io_.provider->getTimer().afterDelay(20 * kj::MILLISECONDS).wait(io_.waitScope);
  EXPECT_EQ(PhaseOverRpc(*client), proto::AgentPhase::READY);
  clock_.Advance(60'000'000);
  ExpectNothingHeld();
  EXPECT_NE(std::string(client->agent.statusRequest().send().wait(io_.waitScope).getStatus().getLastError().cStr())
                .find("timed out"),
            std::string::npos);
}

TEST_F(AgentRpcTest, TcpLoopbackSmoke) {
  Start(agent_test::HostBackends());
  const unsigned port = server_->Listen("127.0.0.1:0").wait(io_.waitScope);
  ASSERT_GT(port, 0u);
  auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
  Client client(address->connect().wait(io_.waitScope));
  auto described = client.agent.describeRequest().send().wait(io_.waitScope).getDescription();
  EXPECT_TRUE(described.getNodePublicKey() == proto::AsView(agent_test::NodeKey().public_key));

  const proto::SignedEnvelope order = SignedOrder(OrderSpec(), clock_);
  ASSERT_TRUE(ErrorOf(StartRequest(client, order).send(), io_.waitScope).ok());
  auto round = client.agent.roundRequest();
  BuildRound(round.initRound(), agent_test::SessionIdOf(1), 0, {42});
  auto answer = round.send().wait(io_.waitScope);
  EXPECT_EQ(0, std::memcmp(answer.getAnswer().getLabels().begin(), agent_test::ExpectedLabels(256, 42, 1).data(), 32));
  auto finish = client.agent.finishRequest();
  proto::WriteEnvelope(SignedVerdict(order, true), finish.initVerdict());
  auto transcript = finish.send().wait(io_.waitScope);
  EXPECT_TRUE(
      proto::VerifyAndParse<proto::TranscriptDigest>(transcript.getTranscript(), agent_test::NodeKey().public_key)
          .ok());
  ExpectNothingHeld();
  client.Drop();
  ASSERT_TRUE(SpinUntil([&] { return server_->connections() == 0; }));
}

}  // namespace
}  // namespace wipeproof

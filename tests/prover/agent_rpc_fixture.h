// The fixture of the agent's RPC tests (agent_rpc_test.cc, round_channel_test.cc): an agent core
// and its AgentRpcServer on one kj event loop with a fake clock, and challenger-side connections to
// it over in-memory pipes (authenticated by fiat or by a real TLS handshake) or loopback TCP.
#pragma once

#include <capnp/message.h>
#include <capnp/rpc-twoparty.h>
#include <gtest/gtest.h>
#include <kj/async-io.h>
#include <kj/compat/tls.h>

#include <functional>
#include <memory>
#include <vector>

#include "proto/rpc_status.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/agent_rpc_server.h"
#include "tests/prover/agent_test_util.h"

namespace wipeproof {

using agent_test::LiveBytes;

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
  AgentRpcTest() : io_(kj::setupAsyncIo()) { options_.timeout_check_interval_us = 1000; }
  ~AgentRpcTest() noexcept override {}

  void SetUp() override { base_live_ = LiveBytes(); }
  void TearDown() override {
    server_ = nullptr;
    core_.reset();
    EXPECT_EQ(LiveBytes(), base_live_) << "device memory still held after the agent stopped";
  }

  void Start(BackendSet backends, AgentConfig config = agent_test::TestConfig()) {
    if (!options_.tls) options_.tls = agent_test::AgentTls();
    core_ = std::make_unique<AgentCore>(std::move(config), std::move(backends), clock_);
    server_ = kj::heap<AgentRpcServer>(*core_, *io_.provider, options_);
  }

  // A connection over an in-memory pipe that the server takes as authenticated as `as`.
  kj::Own<Client> Connect(capnp::ReaderOptions options = proto::RpcReaderOptions(),
                          PeerKeyId as = agent_test::ChallengerKeyId()) {
    auto pipe = io_.provider->newTwoWayPipe();
    server_->Accept(kj::mv(pipe.ends[0]), as);
    return kj::heap<Client>(kj::mv(pipe.ends[1]), options);
  }

  // The client side of a TLS handshake over `raw`, presenting `own`'s certificate and pinning the
  // node's; throws what the handshake throws.
  kj::Own<kj::AsyncIoStream> Tls(kj::Own<kj::AsyncIoStream> raw,
                                 const proto::KeyPair& own = agent_test::ChallengerKey()) {
    client_tls_.push_back(agent_test::ClientTls(own));
    return client_tls_.back()->Connect(kj::mv(raw)).wait(io_.waitScope);
  }

  // A connection over an in-memory pipe, authenticated by a real TLS handshake (AcceptTls).
  kj::Own<Client> ConnectTls(const proto::KeyPair& own = agent_test::ChallengerKey()) {
    auto pipe = io_.provider->newTwoWayPipe();
    server_->AcceptTls(kj::mv(pipe.ends[0]));
    return kj::heap<Client>(Tls(kj::mv(pipe.ends[1]), own));
  }

  // A TCP connection to `port` with the challenger's TLS (or `own`'s).
  kj::Own<Client> ConnectTcp(unsigned port, const proto::KeyPair& own = agent_test::ChallengerKey()) {
    auto address = io_.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io_.waitScope);
    return kj::heap<Client>(Tls(address->connect().wait(io_.waitScope), own));
  }

  // The client side of a TLS handshake over `raw` by a client that presents no certificate (it
  // trusts the node's). In TLS 1.3 the client's side of the handshake completes before the server
  // has judged the client: the agent's refusal arrives with the first read.
  kj::Own<kj::AsyncIoStream> TlsWithoutCertificate(kj::Own<kj::AsyncIoStream> raw) {
    const proto::PinnedCertificate node = agent_test::CertificateOf(agent_test::NodeKey());
    node_certificate_ = std::make_unique<kj::TlsCertificate>(kj::StringPtr(node.pem.c_str()));
    kj::TlsContext::Options options;
    options.useSystemTrustStore = false;
    options.trustedCertificates = kj::arrayPtr(node_certificate_.get(), 1);
    certless_ = std::make_unique<kj::TlsContext>(kj::mv(options));
    return certless_->wrapClient(kj::mv(raw), kj::StringPtr(node.name.c_str())).wait(io_.waitScope);
  }

  // Whether the agent closed `stream`: a read sees EOF, or (TLS without close_notify) fails.
  bool ClosedByTheAgent(kj::AsyncIoStream& stream) {
    char byte;
    try {
      return stream.tryRead(&byte, 1, 1).wait(io_.waitScope) == 0;
    } catch (const kj::Exception&) {
      return true;
    }
  }

  // Runs the event loop for `ms` milliseconds.
  void Spin(int ms) { io_.provider->getTimer().afterDelay(ms * kj::MILLISECONDS).wait(io_.waitScope); }

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
  std::vector<std::unique_ptr<proto::TlsChannel>> client_tls_;  // outlive their connections
  std::unique_ptr<kj::TlsCertificate> node_certificate_;        // TlsWithoutCertificate's
  std::unique_ptr<kj::TlsContext> certless_;
  AgentRpcServerOptions options_;  // set before Start()
  FakeClock clock_;
  std::unique_ptr<AgentCore> core_;
  kj::Own<AgentRpcServer> server_;
  uint64_t base_live_ = 0;
};

}  // namespace wipeproof

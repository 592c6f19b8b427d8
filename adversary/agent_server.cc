#include "adversary/agent_server.h"

#include <capnp/rpc-twoparty.h>
#include <glog/logging.h>

#include <future>

#include "proto/codec.h"

namespace wipeproof::adversary {

// One served connection. Members are destroyed in reverse order: the RPC system before the network
// it runs on, the network before its stream.
struct LoopbackAgentServer::Connection {
  Connection(kj::Own<kj::AsyncIoStream> accepted, kj::Own<proto::ProverAgent::Server> agent)
      : stream(kj::mv(accepted)),
        network(*stream, capnp::rpc::twoparty::Side::SERVER, proto::RpcReaderOptions()),
        rpc(capnp::makeRpcServer(network, proto::ProverAgent::Client(kj::mv(agent)))) {}
  kj::Own<kj::AsyncIoStream> stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
};

LoopbackAgentServer::LoopbackAgentServer(MakeAgent make, const proto::KeyPair& node,
                                         const proto::PinnedCertificate& challenger)
    : make_(std::move(make)) {
  auto tls = proto::TlsChannel::Create(proto::TlsChannel::Role::kServer, node, challenger);
  CHECK(tls.ok()) << "LoopbackAgentServer: " << tls.status().ToString();
  tls_ = std::move(tls).value();
  std::promise<uint16_t> port;
  std::future<uint16_t> port_future = port.get_future();
  std::promise<kj::Own<const kj::Executor>> executor;
  std::future<kj::Own<const kj::Executor>> executor_future = executor.get_future();
  thread_ = std::thread([this, &port, &executor] {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    auto listener = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope)->listen();
    auto stop = kj::newPromiseAndFulfiller<void>();
    stop_ = stop.fulfiller.get();
    executor.set_value(kj::getCurrentThreadExecutor().addRef());
    port.set_value(static_cast<uint16_t>(listener->getPort()));
    kj::TaskSet connections(errors_);
    kj::Timer& timer = io.provider->getTimer();
    kj::Function<kj::Promise<void>()> accept_loop = [&]() -> kj::Promise<void> {
      return listener->accept().then([&](kj::Own<kj::AsyncIoStream> stream) {
        connections.add(tls_->context().wrapServer(kj::mv(stream)).then([&](kj::Own<kj::AsyncIoStream> tls) {
          auto connection = kj::heap<Connection>(kj::mv(tls), make_(timer));
          auto disconnected = connection->network.onDisconnect();
          ++connections_;
          return disconnected.attach(kj::mv(connection));
        }));
        return accept_loop();
      });
    };
    stop.promise.exclusiveJoin(accept_loop()).wait(io.waitScope);
  });
  port_ = port_future.get();
  executor_ = executor_future.get();
}

LoopbackAgentServer::~LoopbackAgentServer() {
  executor_->executeSync([this] { stop_->fulfill(); });
  thread_.join();
}

}  // namespace wipeproof::adversary

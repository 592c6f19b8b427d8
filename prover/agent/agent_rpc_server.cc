#include "prover/agent/agent_rpc_server.h"

#include <glog/logging.h>

#include <utility>

#include "proto/codec.h"
#include "prover/agent/agent_service.h"

namespace wipeproof {

struct AgentRpcServer::Connection {
  Connection(AgentRpcServer& server, ConnectionId connection_id, kj::Own<kj::AsyncIoStream> connection_stream)
      : id(connection_id),
        stream(kj::mv(connection_stream)),
        network(*stream, capnp::rpc::twoparty::Side::SERVER, proto::RpcReaderOptions()),
        rpc(capnp::makeRpcServer(
            network, proto::ProverAgent::Client(kj::heap<AgentService>(server.core_, server.workers_, id)))) {}

  const ConnectionId id;
  kj::Own<kj::AsyncIoStream> stream;
  capnp::TwoPartyVatNetwork network;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> rpc;
};

AgentRpcServer::AgentRpcServer(AgentCore& core, kj::AsyncIoProvider& provider, AgentRpcServerOptions options)
    : core_(core), provider_(provider), options_(options), tasks_(*this) {
  tasks_.add(TimeoutLoop());
}

AgentRpcServer::~AgentRpcServer() noexcept(false) {}

void AgentRpcServer::Accept(kj::Own<kj::AsyncIoStream> stream) {
  const ConnectionId id = next_connection_++;
  auto connection = kj::heap<Connection>(*this, id, kj::mv(stream));
  ++open_connections_;
  VLOG(1) << "connection " << id << " opened";
  kj::Promise<void> closed = connection->network.onDisconnect();
  tasks_.add(closed
                 .then([this, id]() {
                   VLOG(1) << "connection " << id << " closed";
                   core_.OnDisconnect(id);
                 })
                 .attach(kj::mv(connection), kj::defer([this]() { --open_connections_; })));
}

kj::Promise<unsigned> AgentRpcServer::Listen(kj::StringPtr address) {
  return provider_.getNetwork()
      .parseAddress(address, kDefaultAgentPort)
      .then([this](kj::Own<kj::NetworkAddress> parsed) {
        kj::Own<kj::ConnectionReceiver> receiver = parsed->listen();
        const unsigned port = receiver->getPort();
        tasks_.add(AcceptLoop(*receiver).attach(kj::mv(receiver)));
        return port;
      });
}

kj::Promise<void> AgentRpcServer::AcceptLoop(kj::ConnectionReceiver& receiver) {
  return receiver.accept()
      .then(
          [this](kj::Own<kj::AsyncIoStream> stream) -> kj::Promise<void> {
            Accept(kj::mv(stream));
            return kj::READY_NOW;
          },
          [this](kj::Exception&& e) -> kj::Promise<void> {
            // E.g. out of file descriptors: keep listening, a little later.
            LOG(WARNING) << "agent RPC: accept failed: " << e.getDescription().cStr();
            return provider_.getTimer().afterDelay(100 * kj::MILLISECONDS);
          })
      .then([this, &receiver]() { return AcceptLoop(receiver); });
}

kj::Promise<void> AgentRpcServer::TimeoutLoop() {
  return provider_.getTimer().afterDelay(options_.timeout_check_interval_us * kj::MICROSECONDS).then([this]() {
    core_.CheckTimeouts();
    return TimeoutLoop();
  });
}

void AgentRpcServer::taskFailed(kj::Exception&& exception) {
  LOG(WARNING) << "agent RPC: " << exception.getDescription().cStr();
}

}  // namespace wipeproof

#include "challenger/session/pipe_agent_connector.h"

#include <capnp/message.h>

#include "proto/codec.h"

namespace wipeproof {

PipeAgentConnector::PipeAgentConnector(kj::AsyncIoContext& io, kj::Own<proto::ProverAgent::Server> agent)
    : pipe_(io.provider->newTwoWayPipe()),
      server_net_(*pipe_.ends[0], capnp::rpc::twoparty::Side::SERVER, proto::RpcReaderOptions()),
      client_net_(*pipe_.ends[1], capnp::rpc::twoparty::Side::CLIENT, proto::RpcReaderOptions()),
      server_(capnp::makeRpcServer(server_net_, proto::ProverAgent::Client(kj::mv(agent)))),
      client_(capnp::makeRpcClient(client_net_)) {}

PipeAgentConnector::~PipeAgentConnector() noexcept(false) {}

StatusOr<proto::ProverAgent::Client> PipeAgentConnector::Connect() {
  capnp::MallocMessageBuilder vat;
  vat.initRoot<capnp::rpc::twoparty::VatId>().setSide(capnp::rpc::twoparty::Side::SERVER);
  return client_.bootstrap(vat.getRoot<capnp::rpc::twoparty::VatId>()).castAs<proto::ProverAgent>();
}

void PipeAgentConnector::Cut() {
  pipe_.ends[0]->shutdownWrite();
  pipe_.ends[0]->abortRead();
}

}  // namespace wipeproof

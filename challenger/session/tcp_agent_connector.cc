#include "challenger/session/tcp_agent_connector.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include "proto/codec.h"
#include "proto/rpc_status.h"

namespace wipeproof {

TcpAgentConnector::TcpAgentConnector(kj::AsyncIoContext& io, std::string address, uint64_t connect_timeout_us)
    : io_(io), address_(std::move(address)), connect_timeout_us_(connect_timeout_us) {}

TcpAgentConnector::~TcpAgentConnector() noexcept(false) {}

StatusOr<proto::ProverAgent::Client> TcpAgentConnector::Connect() {
  try {
    kj::Own<kj::NetworkAddress> addr =
        io_.provider->getNetwork().parseAddress(kj::StringPtr(address_.c_str())).wait(io_.waitScope);
    auto connected = io_.provider->getTimer()
                         .timeoutAfter(connect_timeout_us_ * kj::MICROSECONDS, addr->connect())
                         .wait(io_.waitScope);
    stream_ = kj::mv(connected);
    int one = 1;
    try {
      stream_->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    } catch (const kj::Exception&) {
      // Not a TCP socket (e.g. a unix address): nothing to tune.
    }
    network_ =
        kj::heap<capnp::TwoPartyVatNetwork>(*stream_, capnp::rpc::twoparty::Side::CLIENT, proto::RpcReaderOptions());
    rpc_ = kj::heap<capnp::RpcSystem<capnp::rpc::twoparty::VatId>>(capnp::makeRpcClient(*network_));
    capnp::MallocMessageBuilder vat;
    auto vat_id = vat.initRoot<capnp::rpc::twoparty::VatId>();
    vat_id.setSide(capnp::rpc::twoparty::Side::SERVER);
    return rpc_->bootstrap(vat_id.asReader()).castAs<proto::ProverAgent>();
  } catch (const kj::Exception& e) {
    return UnavailableError("cannot connect to the agent at " + address_ + ": " + e.getDescription().cStr());
  }
}

}  // namespace wipeproof

#include "challenger/session/tcp_agent_connector.h"

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <utility>

#include "proto/codec.h"
#include "proto/rpc_status.h"

namespace wipeproof {

TcpAgentConnector::TcpAgentConnector(kj::AsyncIoContext& io, std::string address,
                                     proto::PinnedCertificate node_certificate, const proto::KeyPair& own,
                                     uint64_t connect_timeout_us, bool round_channel, kj::WaitScope* fiber_scope)
    : io_(io),
      address_(std::move(address)),
      node_certificate_(std::move(node_certificate)),
      own_(own),
      connect_timeout_us_(connect_timeout_us),
      round_channel_(round_channel),
      fiber_scope_(fiber_scope) {}

TcpAgentConnector::~TcpAgentConnector() noexcept(false) {}

StatusOr<proto::ProverAgent::Client> TcpAgentConnector::Connect() {
  const std::string where = "cannot connect to the agent at " + address_;
  if (node_certificate_.empty()) {
    return UnavailableError(where +
                            ": no certificate is pinned for this node (inventory: certificate_file); sessions "
                            "run only with an agent that proves it holds the node key");
  }
  auto channel = proto::TlsChannel::Create(proto::TlsChannel::Role::kClient, own_, node_certificate_);
  if (!channel.ok()) return UnavailableError(where + ": " + channel.status().message());
  tls_ = std::move(channel).value();
  bool tcp_connected = false;
  try {
    // The event loop may have sat idle for long (the session's challenges and expected labels are
    // computed before it connects): poll it once so the timer reads the time now, not the time the
    // loop last turned, before the connect timeout is measured from it. (A fiber cannot poll: it
    // waits for a timer due at once, which fires only once the loop has read the time anew.)
    kj::WaitScope& scope = fiber_scope_ != nullptr ? *fiber_scope_ : io_.waitScope;
    if (fiber_scope_ == nullptr) {
      io_.waitScope.poll();
    } else {
      io_.provider->getTimer().afterDelay(0 * kj::MICROSECONDS).wait(scope);
    }
    kj::Own<kj::NetworkAddress> addr =
        io_.provider->getNetwork().parseAddress(kj::StringPtr(address_.c_str())).wait(scope);
    auto handshaken = addr->connect().then([this, &tcp_connected](kj::Own<kj::AsyncIoStream> tcp) {
      tcp_connected = true;
      int one = 1;
      try {
        tcp->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      } catch (const kj::Exception&) {
        // Not a TCP socket (e.g. a unix address): nothing to tune.
      }
      return tls_->Connect(kj::mv(tcp));
    });
    stream_ =
        io_.provider->getTimer().timeoutAfter(connect_timeout_us_ * kj::MICROSECONDS, kj::mv(handshaken)).wait(scope);
    network_ =
        kj::heap<capnp::TwoPartyVatNetwork>(*stream_, capnp::rpc::twoparty::Side::CLIENT, proto::RpcReaderOptions());
    rpc_ = kj::heap<capnp::RpcSystem<capnp::rpc::twoparty::VatId>>(capnp::makeRpcClient(*network_));
    capnp::MallocMessageBuilder vat;
    auto vat_id = vat.initRoot<capnp::rpc::twoparty::VatId>();
    vat_id.setSide(capnp::rpc::twoparty::Side::SERVER);
    return rpc_->bootstrap(vat_id.asReader()).castAs<proto::ProverAgent>();
  } catch (const kj::Exception& e) {
    if (tcp_connected) return UnavailableError(where + ": " + tls_->DescribeFailure(e));
    return UnavailableError(where + ": " + e.getDescription().cStr());
  }
}

kj::Promise<kj::Own<kj::AsyncIoStream>> TcpAgentConnector::ConnectRoundChannel() {
  if (!round_channel_) return KJ_EXCEPTION(UNIMPLEMENTED, "the round channel is off (--round_channel=false)");
  if (tls_ == nullptr) return KJ_EXCEPTION(FAILED, "ConnectRoundChannel before Connect");
  auto connected = io_.provider->getNetwork()
                       .parseAddress(kj::StringPtr(address_.c_str()))
                       .then([](kj::Own<kj::NetworkAddress> addr) { return addr->connect(); })
                       .then([this](kj::Own<kj::AsyncIoStream> tcp) {
                         int one = 1;
                         try {
                           tcp->setsockopt(IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                         } catch (const kj::Exception&) {
                           // Not a TCP socket: nothing to tune.
                         }
                         return tls_->Connect(kj::mv(tcp));
                       });
  return io_.provider->getTimer().timeoutAfter(connect_timeout_us_ * kj::MICROSECONDS, kj::mv(connected));
}

}  // namespace wipeproof

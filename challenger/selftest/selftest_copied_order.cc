#include "challenger/selftest/selftest_copied_order.h"

#include "challenger/session/tcp_agent_connector.h"
#include "proto/codec.h"
#include "proto/tls_certificate.h"

namespace wipeproof::selftest {

namespace {
constexpr uint64_t kConnectTimeoutUs = 5'000'000;
}  // namespace

StatusOr<std::string> SendCopiedOrder(kj::AsyncIoContext& io, adversary::LoopbackAgentServer::MakeAgent make,
                                      const proto::KeyPair& node, const proto::KeyPair& challenger,
                                      const proto::KeyPair& third_party, const proto::SignedEnvelope& order,
                                      const adversary::AgentLog& seen) {
  WP_ASSIGN_OR_RETURN(const std::string challenger_pem, proto::CertificatePem(challenger));
  WP_ASSIGN_OR_RETURN(const std::string node_pem, proto::CertificatePem(node));
  WP_ASSIGN_OR_RETURN(const proto::PinnedCertificate challenger_certificate,
                      proto::PinCertificate(challenger_pem, challenger.public_key, "the challenger's certificate"));
  WP_ASSIGN_OR_RETURN(const proto::PinnedCertificate node_certificate,
                      proto::PinCertificate(node_pem, node.public_key, "the node's certificate"));
  const int orders_before = seen.orders;
  bool accepted = false;
  int admitted = 0;
  {
    adversary::LoopbackAgentServer server(std::move(make), node, challenger_certificate);
    {
      TcpAgentConnector connector(io, server.address(), node_certificate, third_party, kConnectTimeoutUs);
      auto client = connector.Connect();
      if (client.ok()) {
        auto start = client->startSessionRequest();
        proto::WriteEnvelope(order, start.initOrder());
        try {
          start.send().wait(io.waitScope);
          accepted = true;
        } catch (const kj::Exception&) {
          // Refused or cut: what the third party must get.
        }
      }
    }
    admitted = server.connections();
  }  // the server's thread has stopped: its agent's log is ours to read
  if (accepted) return std::string("the agent accepted the copied order from a third party");
  if (admitted != 0) return std::string("the agent's TLS channel admitted the third party");
  if (seen.orders != orders_before) return std::string("the copied order reached the agent's order checks");
  return std::string();
}

}  // namespace wipeproof::selftest

// A ProverAgent over TCP and TLS 1.3: Cap'n Proto two-party RPC on one connection, with the size
// and nesting limits of proto::RpcReaderOptions() and Nagle's algorithm off (rounds are small and
// latency-critical). The connection is mutually authenticated (proto/tls_channel.h): the challenger
// presents the certificate of its own key (the challenger key, whose id every order names), and
// talks only to an agent that proves it holds the key of the certificate pinned for the node in the
// inventory: KJ checks the agent's certificate as the client's side of the handshake ends, and
// Connect() then drops the connection before any message is sent. There is no plaintext fallback:
// without a pinned certificate, or when the agent cannot authenticate, Connect() fails naming why,
// and the session is recorded as failed (disconnected) with that text. ConnectRoundChannel opens a
// second connection the same way, with the same timeout (unless `round_channel` is false).
//
// Thread-safety: use on the thread that owns `io` (in the session's fiber, when it has one).
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <memory>
#include <string>

#include "challenger/session/agent_connector.h"
#include "proto/crypto.h"
#include "proto/tls_certificate.h"
#include "proto/tls_channel.h"

namespace wipeproof {

class TcpAgentConnector final : public AgentConnector {
 public:
  // `address`: host:port. `node_certificate`: the certificate pinned for the agent (empty: none,
  // Connect() fails). `own`: the challenger's key pair, presented to the agent. `connect_timeout_us`:
  // how long Connect() waits for the TCP and TLS handshakes together. `round_channel`: whether
  // ConnectRoundChannel opens one (false: it rejects, and rounds go over RPC). `fiber_scope`: the
  // WaitScope of the fiber the session runs in, on `io`'s loop shared with other sessions (Connect
  // waits there; null: on `io`'s own, the thread's top level).
  TcpAgentConnector(kj::AsyncIoContext& io, std::string address, proto::PinnedCertificate node_certificate,
                    const proto::KeyPair& own, uint64_t connect_timeout_us, bool round_channel = true,
                    kj::WaitScope* fiber_scope = nullptr);
  ~TcpAgentConnector() noexcept(false) override;

  // Errors: UNAVAILABLE "cannot connect to the agent at ADDRESS: ..." naming why (no pinned
  // certificate, TCP, or the TLS handshake: the agent is not the pinned node); INVALID_ARGUMENT
  // never (a bad address is UNAVAILABLE too, with kj's reason).
  StatusOr<proto::ProverAgent::Client> Connect() override;
  std::string Describe() const override { return address_; }
  bool HasRoundChannel() const override { return round_channel_; }
  kj::Promise<kj::Own<kj::AsyncIoStream>> ConnectRoundChannel() override;

 private:
  kj::AsyncIoContext& io_;
  const std::string address_;
  const proto::PinnedCertificate node_certificate_;
  const proto::KeyPair own_;
  const uint64_t connect_timeout_us_;
  const bool round_channel_;
  kj::WaitScope* const fiber_scope_;
  // Destroyed in reverse order: RPC system, network, the TLS stream, then its context.
  std::unique_ptr<proto::TlsChannel> tls_;
  kj::Own<kj::AsyncIoStream> stream_;
  kj::Own<capnp::TwoPartyVatNetwork> network_;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc_;
};

}  // namespace wipeproof

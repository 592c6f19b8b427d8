// A ProverAgent over TCP: Cap'n Proto two-party RPC on one connection, with the size and nesting
// limits of proto::RpcReaderOptions() and Nagle's algorithm off (rounds are small and
// latency-critical).
//
// Thread-safety: use on the thread that owns `io`.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <string>

#include "challenger/session/agent_connector.h"

namespace wipeproof {

class TcpAgentConnector final : public AgentConnector {
 public:
  // `address`: host:port. `connect_timeout_us`: how long Connect() waits for the TCP handshake.
  TcpAgentConnector(kj::AsyncIoContext& io, std::string address, uint64_t connect_timeout_us);
  ~TcpAgentConnector() noexcept(false) override;

  StatusOr<proto::ProverAgent::Client> Connect() override;
  std::string Describe() const override { return address_; }

 private:
  kj::AsyncIoContext& io_;
  const std::string address_;
  const uint64_t connect_timeout_us_;
  // Destroyed in reverse order: RPC system, network, then the stream under them.
  kj::Own<kj::AsyncIoStream> stream_;
  kj::Own<capnp::TwoPartyVatNetwork> network_;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc_;
};

}  // namespace wipeproof

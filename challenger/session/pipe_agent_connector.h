// An in-memory connection to an in-process ProverAgent server: both ends of a kj two-way pipe with
// the real Cap'n Proto RPC system and reader limits (proto::RpcReaderOptions) on each side, so an
// in-process agent (the selftest's adversaries, the tests' agents) speaks exactly the wire protocol
// a TCP agent does.
//
// Thread-safety: lives on the thread whose kj event loop `io` belongs to.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include "challenger/session/agent_connector.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

class PipeAgentConnector final : public AgentConnector {
 public:
  PipeAgentConnector(kj::AsyncIoContext& io, kj::Own<proto::ProverAgent::Server> agent);
  ~PipeAgentConnector() noexcept(false) override;
  StatusOr<proto::ProverAgent::Client> Connect() override;
  std::string Describe() const override { return "in-process pipe"; }
  // Cuts the connection from the agent's side (an agent that drops mid-session).
  void Cut();

 private:
  kj::TwoWayPipe pipe_;
  capnp::TwoPartyVatNetwork server_net_, client_net_;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> server_, client_;
};

}  // namespace wipeproof

// An in-memory connection to an in-process ProverAgent server: both ends of a kj two-way pipe with
// the real Cap'n Proto RPC system and reader limits (proto::RpcReaderOptions) on each side, so the
// selftest's agents speak exactly the wire protocol a TCP agent does. (tests/challenger_test_agent.h
// has the same for tests; production code cannot link test code.)
//
// Thread-safety: lives on the thread whose kj event loop `io` belongs to.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include "challenger/agent_connector.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::selftest {

class PipeConnector final : public AgentConnector {
 public:
  PipeConnector(kj::AsyncIoContext& io, kj::Own<proto::ProverAgent::Server> agent);
  ~PipeConnector() noexcept(false) override;
  StatusOr<proto::ProverAgent::Client> Connect() override;
  std::string Describe() const override { return "in-process pipe (selftest)"; }

 private:
  kj::TwoWayPipe pipe_;
  capnp::TwoPartyVatNetwork server_net_, client_net_;
  capnp::RpcSystem<capnp::rpc::twoparty::VatId> server_, client_;
};

}  // namespace wipeproof::selftest

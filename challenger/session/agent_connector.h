// How a session reaches its prover agent: a ProverAgent capability over TCP (tcp_agent_connector.h)
// or, in tests, over an in-memory pipe. The session runner connects after the order is recorded,
// so an unreachable node still leaves a recorded order and a failed verdict (reason disconnected).
//
// Thread-safety: a connector and the client it returns belong to the thread whose kj event loop
// they were made on.
#pragma once

#include "common/status.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

class AgentConnector {
 public:
  virtual ~AgentConnector() noexcept(false) = default;  // capnp objects may throw on destruction
  // The agent's bootstrap capability; valid while the connector lives.
  // Errors: UNAVAILABLE (cannot connect, naming the address and why), INVALID_ARGUMENT (bad address).
  virtual StatusOr<proto::ProverAgent::Client> Connect() = 0;
  // Where the agent is, for messages ("10.0.0.11:7700", "in-process").
  virtual std::string Describe() const = 0;
};

}  // namespace wipeproof

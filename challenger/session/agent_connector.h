// How a session reaches its prover agent: a ProverAgent capability over TCP (tcp_agent_connector.h)
// or, in tests, over an in-memory pipe. The session runner connects after the order is recorded,
// so an unreachable node still leaves a recorded order and a failed verdict (reason disconnected).
//
// Thread-safety: a connector and the client it returns belong to the thread whose kj event loop
// they were made on.
#pragma once

#include <kj/async-io.h>
#include <kj/debug.h>

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
  // Whether ConnectRoundChannel may open one (false: the session does not ask for a round channel).
  virtual bool HasRoundChannel() const { return false; }
  // A second connection to the same agent, authenticated as Connect()'s, for the session's round
  // channel (proto/round_channel_client.h). REQUIRES: Connect() succeeded. Rejects (the session's
  // rounds then stay on the RPC connection): UNIMPLEMENTED where the connector has none (this
  // default) or it is turned off; the connection's or the handshake's errors.
  virtual kj::Promise<kj::Own<kj::AsyncIoStream>> ConnectRoundChannel() {
    return KJ_EXCEPTION(UNIMPLEMENTED, "no round channel to an agent over this connection");
  }
};

}  // namespace wipeproof

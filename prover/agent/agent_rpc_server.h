// Serves the ProverAgent interface (agent_service.h) over Cap'n Proto two-party RPC: on TCP
// (Listen) or on any connected stream (Accept; tests use in-memory pipes). Each connection gets its
// own TwoPartyVatNetwork built with proto::RpcReaderOptions(), so a message over
// kMaxRpcMessageBytes is refused on receipt (capnp then drops the connection), and its own
// AgentService, so the core knows which connection owns a session. A closed connection
// (onDisconnect) ends the session it owns: its memory is freed.
//
// A timer calls AgentCore::CheckTimeouts() every `timeout_check_interval_us` microseconds.
//
// Thread-safety: create, use and destroy on the thread that runs the kj event loop of
// `provider`. Destruction closes every connection (ending the session they own) and joins the
// worker threads, so it returns once no fill is running.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <cstdint>
#include <string>

#include "prover/agent/agent_core.h"
#include "prover/agent/worker_threads.h"

namespace wipeproof {

// The port `serve` listens on when --listen gives none.
inline constexpr unsigned kDefaultAgentPort = 7300;

struct AgentRpcServerOptions {
  int64_t timeout_check_interval_us = 1'000'000;  // microseconds between CheckTimeouts() calls
};

class AgentRpcServer : private kj::TaskSet::ErrorHandler {
 public:
  // REQUIRES: `core` outlives the server.
  AgentRpcServer(AgentCore& core, kj::AsyncIoProvider& provider, AgentRpcServerOptions options = {});
  ~AgentRpcServer() noexcept(false);
  AgentRpcServer(const AgentRpcServer&) = delete;
  AgentRpcServer& operator=(const AgentRpcServer&) = delete;

  // Serves one connected stream until the peer closes it.
  void Accept(kj::Own<kj::AsyncIoStream> stream);

  // Binds `address` ("HOST:PORT"; port 0 picks a free one) and serves every connection made to it
  // until the server is destroyed. The promise resolves to the bound port once listening; it
  // rejects if the address does not parse or cannot be bound.
  kj::Promise<unsigned> Listen(kj::StringPtr address);

  // Connections open now.
  size_t connections() const { return open_connections_; }

 private:
  struct Connection;
  kj::Promise<void> AcceptLoop(kj::ConnectionReceiver& receiver);
  kj::Promise<void> TimeoutLoop();
  void taskFailed(kj::Exception&& exception) override;

  AgentCore& core_;
  kj::AsyncIoProvider& provider_;
  const AgentRpcServerOptions options_;
  ConnectionId next_connection_ = 1;
  size_t open_connections_ = 0;
  // Destroyed after tasks_: the connections (in tasks_) end their sessions first, then the worker
  // threads are joined.
  WorkerThreads workers_;
  kj::TaskSet tasks_;
};

}  // namespace wipeproof

// The ProverAgent capability one connection talks to (wipe.capnp interface ProverAgent): turns
// RPC calls into AgentCore calls and Status errors into exceptions ("wipeproof:CODE: message",
// proto/rpc_status.h). One object per connection, so the core knows which connection owns a session;
// its destruction (the connection is gone) is reported to the core as a disconnect.
//
// startSession runs on a worker thread (WorkerThreads) and fulfils the RPC promise across threads
// (kj::newPromiseAndCrossThreadFulfiller), so the event loop keeps answering status and other
// calls during a fill. If nobody is waiting for the report any more when the fill ends (the call
// was cancelled or the connection closed), the session is ended at once.
//
// Thread-safety: lives on the RPC event loop thread.
#pragma once

#include "proto/wipe.capnp.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/worker_threads.h"

namespace wipeproof {

class AgentService final : public proto::ProverAgent::Server {
 public:
  // REQUIRES: core and workers outlive the service.
  AgentService(AgentCore& core, WorkerThreads& workers, ConnectionId connection);
  ~AgentService();

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;
  kj::Promise<void> describe(DescribeContext context) override;

 private:
  AgentCore& core_;
  WorkerThreads& workers_;
  const ConnectionId connection_;
};

}  // namespace wipeproof

// The ProverAgent capability one connection talks to (wipe.capnp interface ProverAgent): turns
// RPC calls into AgentCore calls and Status errors into exceptions ("wipeproof:CODE: message",
// proto/rpc_status.h). One object per connection, so the core knows which connection owns a session
// and which key the connection is authenticated as (orders are admitted only from the challenger
// they name); its destruction (the connection is gone) is reported to the core as a disconnect.
//
// startSession checks the order on the event loop (AgentCore::AdmitSession: quick, no memory), so
// a refused order never costs a thread; only an admitted order gets a worker thread (WorkerThreads)
// for its fill, and the core admits one session at a time, so at most one fill thread runs (plus,
// for a moment, the previous one returning). The worker fulfils the RPC promise across threads
// (kj::newPromiseAndCrossThreadFulfiller), so the event loop keeps answering status and other
// calls during a fill. If nobody is waiting for the report any more when the fill ends (the call
// was cancelled or the connection closed), the session is ended at once.
//
// Every call is reported to the connection's CallActivity (when given), which the RPC server uses
// to close connections that stay idle (agent_rpc_server.h).
//
// Thread-safety: lives on the RPC event loop thread.
#pragma once

#include <kj/timer.h>

#include <cstdint>
#include <memory>

#include "proto/wipe.capnp.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/worker_threads.h"

namespace wipeproof {

// When a connection last had a call, and how many of its calls are still running. Shared by the
// connection's AgentService and the server's idle watch. Event loop thread only.
class CallActivity {
 public:
  explicit CallActivity(const kj::Timer& timer) : timer_(timer), last_(timer.now()) {}

  // Marks a call arriving on `activity`; the returned object marks it done when destroyed (attach
  // it to the call's promise). It keeps `activity` alive.
  static kj::Own<void> Begin(std::shared_ptr<CallActivity> activity);

  kj::TimePoint last() const { return last_; }  // arrival or end of the latest call
  uint32_t in_flight() const { return in_flight_; }

 private:
  void Touch() { last_ = timer_.now(); }
  const kj::Timer& timer_;
  kj::TimePoint last_;
  uint32_t in_flight_ = 0;
};

class AgentService final : public proto::ProverAgent::Server {
 public:
  // REQUIRES: core and workers outlive the service. `authenticated_as`: the key the connection is
  // authenticated as (nullopt: none). `activity` may be null (nothing reported).
  AgentService(AgentCore& core, WorkerThreads& workers, ConnectionId connection, PeerKeyId authenticated_as,
               std::shared_ptr<CallActivity> activity = nullptr);
  ~AgentService();

 protected:
  kj::Promise<void> startSession(StartSessionContext context) override;
  kj::Promise<void> round(RoundContext context) override;
  kj::Promise<void> finish(FinishContext context) override;
  kj::Promise<void> abort(AbortContext context) override;
  kj::Promise<void> status(StatusContext context) override;
  kj::Promise<void> describe(DescribeContext context) override;
  kj::Promise<void> deviceFilled(DeviceFilledContext context) override;
  kj::Promise<void> openRoundChannel(OpenRoundChannelContext context) override;

 private:
  kj::Own<void> BeginCall() { return activity_ ? CallActivity::Begin(activity_) : kj::Own<void>(); }

  AgentCore& core_;
  WorkerThreads& workers_;
  const ConnectionId connection_;
  const PeerKeyId authenticated_as_;
  const std::shared_ptr<CallActivity> activity_;
};

}  // namespace wipeproof

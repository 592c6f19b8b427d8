// Serves the ProverAgent interface (agent_service.h) over Cap'n Proto two-party RPC: on TCP
// (Listen), on any ConnectionReceiver (Serve) or on any connected stream (Accept; tests use
// in-memory pipes). Each connection gets its own AgentService, so the core knows which connection
// owns a session, and its own TwoPartyVatNetwork built with proto::RpcReaderOptions(), so a message
// over kMaxRpcMessageBytes (or of 512 segments or more) is refused as soon as its frame header
// arrives: capnp drops the connection, and the server logs why (rate-limited) and counts it
// (messages_refused). A closed connection (onDisconnect) ends the session it owns: its memory is
// freed.
//
// Staying up under load or abuse (none of it can end or stall a session another connection owns):
//   - Accept errors (EMFILE, ENFILE, ENOBUFS, ...; kj's accept() throws them synchronously) are
//     logged, rate-limited, and accepting resumes after `accept_retry_delay_us`. The listener is
//     never closed while the server lives.
//   - At most `max_connections` connections are open. A new connection at the cap evicts the
//     OLDEST open connection (the first opened) that owns no session and has no call running,
//     however recently it made a call (rate-limited log line "evicting connection N ..."): calls
//     such as status() cannot hold a slot against a newcomer, and a newcomer (the challenger about
//     to send its order) gets the longest grace, max_connections - 1 further connections, before
//     it can be evicted in turn. Only a session's owner, and a connection whose call is running,
//     hold a slot; the core admits one session at a time and every call but the owner's
//     startSession (its fill) is answered on the event loop, so with max_connections >= 2 a
//     newcomer is refused (accepted and closed at once, rate-limited log line) only for a moment.
//     Keep RLIMIT_NOFILE well above the cap (Listen warns if it is not).
//   - A connection that owns no session and has no call running is closed after
//     `idle_timeout_us` without a call (a connection that sends bytes but never completes a call,
//     a "trickling" one, is idle too). A connection that owns a session is left to the session
//     timeout (AgentCore::CheckTimeouts), however long it stays quiet. Any call (status() too)
//     restarts the idle clock, so a monitor polling status stays open below the cap; at the cap
//     only the age order above counts.
//   - Refused orders are answered on the event loop (AgentService): the only threads are fills,
//     and the core admits one session at a time.
// Calls of one connection never wait for another's: kj reads every connection asynchronously.
//
// A timer calls AgentCore::CheckTimeouts() every `timeout_check_interval_us` microseconds.
//
// Thread-safety: create, use and destroy on the thread that runs the kj event loop of
// `provider`. Destruction closes every connection (ending the session they own) and joins the
// worker threads, so it returns once no fill is running.
#pragma once

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "prover/agent/agent_core.h"
#include "prover/agent/worker_threads.h"

namespace wipeproof {

// The port `serve` listens on when --listen gives none.
inline constexpr unsigned kDefaultAgentPort = 7300;
// Defaults of `serve` --max_connections and --idle_timeout_s.
inline constexpr size_t kDefaultMaxConnections = 64;
inline constexpr int64_t kDefaultIdleTimeoutUs = 60'000'000;  // 60 s

struct AgentRpcServerOptions {
  int64_t timeout_check_interval_us = 1'000'000;    // microseconds between CheckTimeouts() calls
  size_t max_connections = kDefaultMaxConnections;  // connections open at once; at least 1
  int64_t idle_timeout_us = kDefaultIdleTimeoutUs;  // microseconds; <= 0: idle connections stay
  int64_t accept_retry_delay_us = 100'000;          // microseconds after a failed accept
};

class AgentRpcServer : private kj::TaskSet::ErrorHandler {
 public:
  // REQUIRES: `core` outlives the server; options.max_connections >= 1.
  AgentRpcServer(AgentCore& core, kj::AsyncIoProvider& provider, AgentRpcServerOptions options = {});
  ~AgentRpcServer() noexcept(false);
  AgentRpcServer(const AgentRpcServer&) = delete;
  AgentRpcServer& operator=(const AgentRpcServer&) = delete;

  // Serves one connected stream until the peer closes it, it idles out, it is evicted for a newer
  // one or the server is destroyed. At the cap, evicts the oldest connection that owns no session
  // and has no call running; closes `stream` at once if there is none.
  void Accept(kj::Own<kj::AsyncIoStream> stream);

  // Accepts from `receiver` and serves every connection until the server is destroyed.
  void Serve(kj::Own<kj::ConnectionReceiver> receiver);

  // Binds `address` ("HOST:PORT"; port 0 picks a free one) and Serve()s it. The promise resolves
  // to the bound port once listening; it rejects if the address does not parse or cannot be bound.
  kj::Promise<unsigned> Listen(kj::StringPtr address);

  // Connections open now (one being closed for eviction no longer counts).
  size_t connections() const { return open_.size(); }
  // Since the server started: accept() failures, connections closed at once for the cap (none
  // evictable), connections evicted for a newer one at the cap, connections closed for idling,
  // fill threads started.
  uint64_t accept_errors() const { return accept_errors_; }
  uint64_t connections_refused() const { return connections_refused_; }
  uint64_t connections_evicted() const { return connections_evicted_; }
  uint64_t connections_idled_out() const { return connections_idled_out_; }
  uint64_t fill_threads_started() const { return workers_.started(); }
  // Messages refused on receipt (too large, too many segments, malformed): each closed its connection.
  uint64_t messages_refused() const { return messages_refused_; }

 private:
  struct Connection;
  class RefusalLoggingStream;
  // One kind of log line, written at most once per second; counts the ones it skipped.
  struct LogLimit {
    int64_t next_us = INT64_MIN;  // kj timer microseconds
    uint64_t skipped = 0;
  };
  // True if a line of `limit`'s kind may be written now; then *skipped is how many were not.
  bool MayLog(LogLimit& limit, uint64_t* skipped);

  kj::Promise<void> AcceptLoop(kj::ConnectionReceiver& receiver);
  // At the cap: closes the oldest connection that owns no session and has no call running, and
  // returns true; false if every open connection does one or the other.
  bool EvictForNewConnection();
  // Resolves when `connection` should be closed for idling (never if idle_timeout_us <= 0).
  kj::Promise<void> IdleWatch(Connection& connection);
  kj::Promise<void> TimeoutLoop();
  // Counts and logs (rate-limited) a message that connection `id` sent and capnp refused.
  void MessageRefused(ConnectionId id, const kj::Exception& e);
  void taskFailed(kj::Exception&& exception) override;

  AgentCore& core_;
  kj::AsyncIoProvider& provider_;
  const AgentRpcServerOptions options_;
  ConnectionId next_connection_ = 1;
  // Open connections not being evicted, by id: ids grow, so the first is the oldest. Entries are
  // erased when their connection is destroyed or chosen for eviction.
  std::map<ConnectionId, Connection*> open_;
  uint64_t accept_errors_ = 0;
  uint64_t connections_refused_ = 0;
  uint64_t connections_evicted_ = 0;
  uint64_t connections_idled_out_ = 0;
  uint64_t messages_refused_ = 0;
  LogLimit accept_log_, refuse_log_, evict_log_, idle_log_, message_log_;
  // Destroyed after tasks_: the connections (in tasks_) end their sessions first, then the worker
  // threads are joined.
  WorkerThreads workers_;
  kj::TaskSet tasks_;
};

}  // namespace wipeproof

// Serves the ProverAgent interface (agent_service.h) over Cap'n Proto two-party RPC: on TCP
// (Listen), on any ConnectionReceiver (Serve) or on any connected stream (AcceptTls; Accept for a
// stream already authenticated by other means: tests' in-memory pipes). Each connection gets its
// own AgentService, so the core knows which connection owns a session and which key it is
// authenticated as, and its own TwoPartyVatNetwork built with proto::RpcReaderOptions(), so a
// message over kMaxRpcMessageBytes (or of 512 segments or more) is refused as soon as its frame
// header arrives: capnp drops the connection, and the server logs why (rate-limited) and counts it
// (messages_refused). A closed connection (onDisconnect) ends the session it owns: its memory is
// freed.
//
// Authentication (TLS 1.3, proto/tls_channel.h, options.tls): every connection Serve and Listen
// accept is a TLS connection. Its handshake comes first and must prove that the peer holds the
// pinned challenger certificate's key (a client certificate is required; none, or any other, fails
// the handshake); only then is it a connection (counted, numbered, given an RPC system), authenticated
// as that key, which AgentCore::AdmitSession compares with the key an order names. Before that:
//   - no Cap'n Proto frame is read at all: the RPC system does not exist yet, so a peer without a
//     certificate sending a 32 MiB frame header has it read as a malformed TLS record and is closed;
//   - at most kMaxHandshakeBytes (16 KiB) are read from the peer (handshake_guard.h; TLS
//     records are at most 16 KiB, and our handshake is under 2 KiB); more fails the handshake;
//   - the handshake must finish within `handshake_timeout_us`, or the connection is closed;
//   - at most `max_handshakes` handshakes run at once; a new connection at that cap closes the
//     OLDEST handshake (rate-limited log line), so connections that never finish theirs cannot keep
//     the challenger from handshaking; they never count against `max_connections`, so they cannot
//     hold a slot of an authenticated connection, least of all the session owner's;
//   - while a session runs (filling or ready), handshake work is paced: the bytes of at most one
//     handshake read per `handshake_pace_us` are handed to OpenSSL, whose key exchange, signature
//     and certificate check for a step (a few hundred microseconds) follow at
//     once; so however many peers connect, the shared event loop spends at most one such step per
//     `handshake_pace_us` on them, and a round waits behind at most one. When no session runs,
//     handshakes are not paced.
//
// Staying up under load or abuse (none of it can end or stall a session another connection owns):
//   - Accept errors (EMFILE, ENFILE, ENOBUFS, ...; kj's accept() throws them synchronously) are
//     logged, rate-limited, and accepting resumes after `accept_retry_delay_us`. The listener is
//     never closed while the server lives.
//   - At most `max_connections` authenticated connections are open. A new one at the cap evicts
//     the OLDEST open connection (the first opened) that owns no session and has no call running,
//     however recently it made a call (rate-limited log line "evicting connection N ..."): calls
//     such as status() cannot hold a slot against a newcomer, and a newcomer (the challenger about
//     to send its order) gets the longest grace, max_connections - 1 further connections, before
//     it can be evicted in turn. Only a session's owner, and a connection whose call is running,
//     hold a slot; the core admits one session at a time and every call but the owner's
//     startSession (its fill) is answered on the event loop, so with max_connections >= 2 a
//     newcomer is refused (accepted and closed at once, rate-limited log line) only for a moment.
//     Keep RLIMIT_NOFILE well above max_connections + max_handshakes (Listen warns if it is not).
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
#include <memory>
#include <string>

#include "proto/tls_channel.h"
#include "prover/agent/agent_core.h"
#include "prover/agent/worker_threads.h"

namespace wipeproof {

// Microseconds between a round channel's checks that its session still runs (round_channel.h).
inline constexpr int64_t kChannelWatchUs = 1'000'000;
// The port `serve` listens on when --listen gives none.
inline constexpr unsigned kDefaultAgentPort = 7300;
// Defaults of `serve` --max_connections and --idle_timeout_s.
inline constexpr size_t kDefaultMaxConnections = 64;
inline constexpr int64_t kDefaultIdleTimeoutUs = 60'000'000;  // 60 s
// Defaults of `serve` --max_handshakes and --handshake_timeout_s, and of the pacing interval.
inline constexpr size_t kDefaultMaxHandshakes = 16;
inline constexpr int64_t kDefaultHandshakeTimeoutUs = 10'000'000;  // 10 s
inline constexpr int64_t kDefaultHandshakePaceUs = 50'000;         // 50 ms
// Bytes read from a peer before its handshake has authenticated it, at most.
inline constexpr size_t kMaxHandshakeBytes = 16 * 1024;

struct AgentRpcServerOptions {
  int64_t timeout_check_interval_us = 1'000'000;    // microseconds between CheckTimeouts() calls
  size_t max_connections = kDefaultMaxConnections;  // authenticated connections open at once; >= 1
  int64_t idle_timeout_us = kDefaultIdleTimeoutUs;  // microseconds; <= 0: idle connections stay
  int64_t accept_retry_delay_us = 100'000;          // microseconds after a failed accept
  // The agent's TLS (Role::kServer: its node key's certificate, the pinned challenger certificate).
  // Required by Serve, Listen and AcceptTls.
  std::shared_ptr<proto::TlsChannel> tls;
  size_t max_handshakes = kDefaultMaxHandshakes;              // TLS handshakes at once; >= 1
  int64_t handshake_timeout_us = kDefaultHandshakeTimeoutUs;  // microseconds; > 0
  int64_t handshake_pace_us = kDefaultHandshakePaceUs;        // microseconds; <= 0: never paced
};

class AgentRpcServer : private kj::TaskSet::ErrorHandler {
 public:
  // REQUIRES: `core` outlives the server; options.max_connections >= 1.
  AgentRpcServer(AgentCore& core, kj::AsyncIoProvider& provider, AgentRpcServerOptions options = {});
  ~AgentRpcServer() noexcept(false);
  AgentRpcServer(const AgentRpcServer&) = delete;
  AgentRpcServer& operator=(const AgentRpcServer&) = delete;

  // Serves one connected stream, authenticated as `authenticated_as` by other means than ours (an
  // in-process pipe), until the peer closes it, it idles out, it is evicted for a newer one or the
  // server is destroyed. At the cap, evicts the oldest connection that owns no session and has no
  // call running; closes `stream` at once if there is none.
  void Accept(kj::Own<kj::AsyncIoStream> stream, PeerKeyId authenticated_as);

  // Runs the TLS handshake on `stream` (see the top of the file) and, once it has authenticated
  // the peer, Accept()s the TLS stream as the key it proved. `peer` names it in log lines (an
  // address). REQUIRES: options.tls.
  void AcceptTls(kj::Own<kj::AsyncIoStream> stream, std::string peer = "");

  // Accepts from `receiver` and AcceptTls()es every connection until the server is destroyed.
  // REQUIRES: options.tls.
  void Serve(kj::Own<kj::ConnectionReceiver> receiver);

  // Binds `address` ("HOST:PORT"; port 0 picks a free one) and Serve()s it. The promise resolves
  // to the bound port once listening; it rejects if the address does not parse or cannot be bound.
  // REQUIRES: options.tls.
  kj::Promise<unsigned> Listen(kj::StringPtr address);

  // Authenticated connections open now, RPC connections and round channels (one being closed for
  // eviction no longer counts).
  size_t connections() const { return open_.size(); }
  // TLS handshakes running now; since the server started: handshakes that failed (no or a wrong
  // certificate, not TLS 1.3, not TLS at all, over the byte limit, timed out), those of them that
  // timed out, handshakes closed for a newer one at the cap, and handshake reads held back by the
  // pacing.
  size_t handshakes() const { return handshaking_.size(); }
  uint64_t handshakes_failed() const { return handshakes_failed_; }
  uint64_t handshakes_timed_out() const { return handshakes_timed_out_; }
  uint64_t handshakes_evicted() const { return handshakes_evicted_; }
  uint64_t handshake_reads_paced() const { return handshake_reads_paced_; }
  // The most bytes read from one peer before its handshake ended (authenticated or not).
  uint64_t max_handshake_bytes_read() const { return max_handshake_bytes_read_; }
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
  // Since the server started: round channels opened (round_channel.h), those whose hello was
  // accepted, those closed after a refusal, and the rounds the closed ones answered.
  uint64_t round_channels_opened() const { return round_channels_opened_; }
  uint64_t round_channels_bound() const { return round_channels_bound_; }
  uint64_t round_channels_refused() const { return round_channels_refused_; }
  uint64_t round_channel_rounds() const { return round_channel_rounds_; }

 private:
  struct Connection;
  struct Handshake;
  class RefusalLoggingStream;
  // One kind of log line, written at most once per second; counts the ones it skipped.
  struct LogLimit {
    int64_t next_us = INT64_MIN;  // kj timer microseconds
    uint64_t skipped = 0;
  };
  // True if a line of `limit`'s kind may be written now; then *skipped is how many were not.
  bool MayLog(LogLimit& limit, uint64_t* skipped);

  kj::Promise<void> AcceptLoop(kj::ConnectionReceiver& receiver);
  // Reads `connection`'s first 8 bytes, then serves it as a round channel (the preface) or an RPC
  // connection; resolves when it closes.
  kj::Promise<void> ServeConnection(Connection& connection);
  // Whether `connection` is a round channel whose session runs: it holds its slot like the owner.
  bool ServingRounds(const Connection& connection) const;
  // Round channel `channel` was bound to `owner`'s session: closes the owner's older channels.
  void RoundChannelBound(ConnectionId channel, ConnectionId owner);
  // At the cap: closes the oldest connection that owns no session and has no call running, and
  // returns true; false if every open connection does one or the other.
  bool EvictForNewConnection();
  // Closes the oldest running handshake (at the cap of handshakes).
  void EvictOldestHandshake();
  // Resolves when a handshake may have its next read's bytes (pacing while a session runs).
  kj::Promise<void> PaceHandshakeRead();
  // Whether an open connection owns a session (filling, ready or releasing).
  bool SessionRunning() const;
  void HandshakeEnded(const Handshake& handshake, const kj::Exception* failure);
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
  // Running TLS handshakes by number (the first is the oldest); erased when each ends.
  uint64_t next_handshake_ = 1;
  std::map<uint64_t, Handshake*> handshaking_;
  kj::TimePoint next_handshake_read_;  // the earliest time the next paced handshake read may go on
  uint64_t handshakes_failed_ = 0;
  uint64_t handshakes_timed_out_ = 0;
  uint64_t handshakes_evicted_ = 0;
  uint64_t handshake_reads_paced_ = 0;
  uint64_t max_handshake_bytes_read_ = 0;
  uint64_t accept_errors_ = 0;
  uint64_t connections_refused_ = 0;
  uint64_t connections_evicted_ = 0;
  uint64_t connections_idled_out_ = 0;
  uint64_t messages_refused_ = 0;
  uint64_t round_channels_opened_ = 0;
  uint64_t round_channels_refused_ = 0;
  uint64_t round_channel_rounds_ = 0;
  uint64_t round_channels_bound_ = 0;
  LogLimit accept_log_, refuse_log_, evict_log_, idle_log_, message_log_, handshake_log_, handshake_timeout_log_,
      handshake_evict_log_;
  // Destroyed after tasks_: the connections (in tasks_) end their sessions first, then the worker
  // threads are joined.
  WorkerThreads workers_;
  kj::TaskSet tasks_;
};

}  // namespace wipeproof

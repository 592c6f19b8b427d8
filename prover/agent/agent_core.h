// The prover agent's session state machine (wipe.capnp ProverAgent, protocol v2), without RPC:
// the RPC layer (agent_rpc_server.h) and tests call it directly. Time comes from an injected
// Clock, so expiry, skew and session timeouts are tested with FakeClock.
//
//   idle --StartSession ok--> filling --report signed--> ready
//   filling: each device that holds all its labels gets a signed DeviceFillNotice (AwaitDeviceFilled)
//            and may be challenged at once, while the others still fill
//   filling|ready --AnswerRound(i)--> same   (only devices with a notice; no limit on rounds: the
//                                             order never says how many, the agent answers until Finish)
//   ready --Finish--> idle (transcript signed, memory freed)
//   filling|ready --Abort | OnDisconnect(owner) | CheckTimeouts | protocol error--> idle
//   (a session ended while filling shows phase "releasing" until its fill threads stop)
//
// StartSession checks, in this order, each failure a typed refusal that holds no memory:
//   1. no session running                 FAILED_PRECONDITION "session <id> in progress (filling)"
//   2. envelope, signature, then payload  proto/signing.h: INVALID_ARGUMENT / PERMISSION_DENIED;
//      (the challenger key's signature is  a tampered order fails here as a signature failure
//      checked before the payload is
//      parsed)
//   2b. under the authority's delegation  PERMISSION_DENIED (proto/delegation.h): verified under the
//      the order carries                   authority key, naming the challenger key, in force, listing
//                                         the order's profile; refused before its id is recorded
//   3. addressed to this node, and sent   PERMISSION_DENIED (order_checks.h): a copied order replayed
//      on a connection authenticated       by anyone but the challenger it names is refused here,
//      as the challenger it names          before its session id is recorded as seen
//   4. time: expiry, skew, agent start,   DEADLINE_EXCEEDED / FAILED_PRECONDITION /
//      lifetime                           INVALID_ARGUMENT (order_checks.h). An order issued before
//                                         this agent started is refused with no skew allowance
//                                         ("order issued before this agent started at ...; the
//                                         challenger must issue a fresh order"): after a restart, a
//                                         challenger whose clock lags the node's by X is refused for
//                                         X (seen_sessions.h says why, and what remains open)
//   5. session id unseen                  ALREADY_EXISTS; from here on the id counts as seen, so a
//                                         refused order cannot be replayed either (seen_sessions.h)
//   6. plan names exactly this node's     NOT_FOUND (unknown device) / INVALID_ARGUMENT (omitted or
//      devices, each with room           duplicate) / RESOURCE_EXHAUSTED "device 'SEL' short of
//                                         capacity: ..." (device_match.h)
//   7. acquire + fill all devices         RESOURCE_EXHAUSTED (short), the backend's error naming the
//      concurrently                       device, or the reason the session was ended meanwhile
// Steps 1-6 are AdmitSession (quick, no memory taken: the RPC layer runs it on its event loop, so
// a refused order never costs a thread); step 7 is FillSession (blocks for the fill: a worker
// thread). StartSession does both. At most one admitted session exists, so at most one fill runs.
// Shortfall policy: refuse, never fill short (device_fill.h). The challenger maps a
// RESOURCE_EXHAUSTED refusal whose message starts "device '" to FailureReason shortCapacity.
//
// Ending a session early (each frees all memory; the reason becomes status().last_error as
// "session <id> ended: <reason>", and a pending StartSession fails with "session <id>: <reason>"):
//   Abort(owner, id, reason)     FAILED_PRECONDITION "aborted: <reason>"
//   OnDisconnect(owner)          UNAVAILABLE "the challenger disconnected"
//   CheckTimeouts()              DEADLINE_EXCEEDED "timed out: ..." once
//                                sessionTimeoutUs (0 in the order: AgentConfig's; capped by it)
//                                have passed since the order arrived (monotonic clock)
//   protocol error (below)       the refusal itself
// Protocol-error policy: a round or finish from the session's owner (the connection that started
// it) that the agent refuses ends the session: wrong session id or round index, a device index or
// label index out of range, a round before the report, a verdict that does not verify. The
// challenger fails such a session with protocolError anyway; holding memory for it helps no one.
// Calls from other connections (ConnectionId != owner) are refused with PERMISSION_DENIED and do
// not touch the session. That includes Abort: the session id is public (status() shows it), so an
// abort honoured from anyone would let any connection kill another challenger's session.
//
// Metrics: with AgentConfig::metrics set, each refusal (by reason), each session end (by outcome)
// and each answered round (with its lookup time) is reported to it (agent_metrics.h).
//
// Thread-safety: all methods are thread-safe. StartSession and FillSession block for the whole fill
// and must run off the RPC event loop; the other methods return quickly (AdmitSession verifies a
// signature and enumerates devices; AnswerRound does the lookups; Finish, Abort etc. may free
// memory, munmap of large host regions takes a moment).
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"
#include "prover/agent/agent_config.h"
#include "prover/agent/agent_status.h"
#include "prover/agent/seen_sessions.h"
#include "prover/backends/backend_factory.h"

namespace wipeproof {

// Identifies the connection a call came on (the RPC layer numbers them from 1). Tests use any value.
using ConnectionId = uint64_t;
// The key a connection is authenticated as (the RPC layer's TLS handshake, proto/tls_channel.h);
// nullopt when it is not authenticated.
using PeerKeyId = std::optional<proto::KeyId>;

class AgentCore {
 public:
  // REQUIRES: `clock` outlives the core; config keys are set and node_name is not empty.
  AgentCore(AgentConfig config, BackendSet backends, const Clock& clock);
  // Ends a running session ("agent stopping") and waits for its fill threads.
  ~AgentCore();
  AgentCore(const AgentCore&) = delete;
  AgentCore& operator=(const AgentCore&) = delete;

  // An order that passed checks 1-6: the session exists (phase filling, owned by the connection
  // that sent it, its timeout running) but holds no memory yet. Move-only. Pass it to FillSession;
  // destroying it unused ends the session ("the fill never started") and returns to idle.
  class Admitted {
   public:
    Admitted(Admitted&& other) noexcept : core_(other.core_) { other.core_ = nullptr; }
    Admitted& operator=(Admitted&& other) noexcept;
    Admitted(const Admitted&) = delete;
    Admitted& operator=(const Admitted&) = delete;
    ~Admitted();

   private:
    friend class AgentCore;
    explicit Admitted(AgentCore* core) : core_(core) {}
    AgentCore* core_ = nullptr;  // null once used
  };

  // Checks 1-6 of the order (see top of file), `owner` being the connection it came on and
  // `authenticated_as` the key that connection is authenticated as. Returns quickly; a refusal
  // holds nothing.
  StatusOr<Admitted> AdmitSession(const proto::SignedEnvelope& order, ConnectionId owner,
                                  const PeerKeyId& authenticated_as);
  // Step 7: fills every planned device and returns the node-signed FillReport envelope. Blocks
  // until the fill is done or the session is ended (abort, disconnect, timeout meanwhile).
  StatusOr<proto::SignedEnvelope> FillSession(Admitted admitted);
  // AdmitSession then FillSession.
  StatusOr<proto::SignedEnvelope> StartSession(const proto::SignedEnvelope& order, ConnectionId owner,
                                               const PeerKeyId& authenticated_as);

  // How AwaitDeviceFilled reports: the device's signed DeviceFillNotice, or why it never will.
  using NoticeCallback = std::function<void(StatusOr<proto::SignedEnvelope>)>;

  // Calls `done` with device `device_index`'s node-signed DeviceFillNotice (wipe.capnp) as soon as
  // that device of session `session_id` holds all its labels (at once if it already does), or with
  // why it never will: FAILED_PRECONDITION when no such session runs or it ends first (with its
  // reason), PERMISSION_DENIED when `from` does not own it, INVALID_ARGUMENT for an index out of
  // range. `done` runs on the fill thread or the caller's, under the core's lock: it must be quick
  // and must not call the core.
  void AwaitDeviceFilled(ConnectionId from, proto::ByteView session_id, uint32_t device_index, NoticeCallback done);

  // Answers `round` into `answer` (sessionId, roundIndex, labels in request order, agentMicros)
  // and adds both to the transcript. `round` may be unvalidated RPC input. Errors that leave
  // everything as it was: FAILED_PRECONDITION "no session running (...)", PERMISSION_DENIED (not
  // the owner). Errors that end the session (protocol-error policy): FAILED_PRECONDITION (before
  // the report), INVALID_ARGUMENT (malformed or oversized round, wrong session id or round index,
  // device or label index out of range, naming the device and index), a device's lookup error.
  //
  // The cheap path (issue "Fast rounds"): the round is copied, parsed and checked once; every
  // device's lookup is started before any is waited for (DeviceMemory::StartLookup), so a round
  // over d devices takes about the slowest device's lookup, not the sum; the round and its answer
  // are handed to the transcript (and the round counted in the metrics) only by HashAnsweredRound,
  // after the answer went out, and hashed on the transcript's own thread (session_transcript.h).
  Status AnswerRound(ConnectionId from, proto::ChallengeRound::Reader round, proto::RoundAnswer::Builder answer);
  // Hands the last answered round and its answer to the session's transcript, once (a no-op when
  // there is none pending), whose thread hashes them. The RPC layer calls it after the answer is on
  // its way; AnswerRound and Finish call it first themselves, so no round is ever missing from a
  // transcript (Finish waits until every round is hashed). A hashing error (a bug) ends the session
  // here, at the round after the one whose hash failed.
  void HashAnsweredRound();

  // The round channel (round_channel.h; wipe.capnp RoundChannelHello): rounds of the session on a
  // second connection of the same challenger, without the RPC system.
  using RoundChannelToken = std::array<uint8_t, 32>;
  // A fresh token for session `session_id` (16 bytes), which `from` must own; it replaces an unused
  // one. Errors (nothing changes): FAILED_PRECONDITION when no session with that id runs or it is
  // ending; PERMISSION_DENIED when another connection owns it.
  StatusOr<RoundChannelToken> OpenRoundChannel(ConnectionId from, proto::ByteView session_id);
  // Uses up the token of session `session_id` for a channel authenticated as `authenticated_as`;
  // returns the owner connection the channel answers rounds for. Errors, all PERMISSION_DENIED and
  // none of them touching the session: no session with that id runs, no unused token was issued,
  // `token` differs (compared in constant time; a wrong token leaves the issued one usable, as
  // guessing 32 random bytes is hopeless), or `authenticated_as` is not the challenger key the
  // order names.
  StatusOr<ConnectionId> RedeemRoundChannel(proto::ByteView session_id, proto::ByteView token,
                                            const PeerKeyId& authenticated_as);
  // Whether session `id` runs, owned by `owner`, and is not ending: a round channel lives as long.
  bool SessionRunsFor(ConnectionId owner, const SessionId& id) const;

  // Verifies the challenger-signed verdict (its sessionId and orderDigest must be this session's),
  // signs the TranscriptDigest (with the verdict's digest), frees all memory and returns to idle.
  // A failing verdict is accepted the same way: the transcript covers the rounds answered so far. Errors as
  // AnswerRound, plus the verdict's decoding and verification errors (proto/signing.h), which end the session.
  StatusOr<proto::SignedEnvelope> Finish(ConnectionId from, const proto::SignedEnvelope& verdict);
  // The same for a wire envelope (RPC parameters): a malformed envelope is a protocol error too.
  StatusOr<proto::SignedEnvelope> Finish(ConnectionId from, proto::Envelope::Reader verdict);

  // Ends session `session_id` (16 bytes) if it is running and `from` owns it. Errors:
  // PERMISSION_DENIED when another connection owns it (the session goes on untouched). OK and
  // nothing happens when no session with that id is running (it may just have ended).
  Status Abort(ConnectionId from, proto::ByteView session_id, const std::string& reason);
  // The RPC layer reports a closed connection: ends the session it owns, if any.
  void OnDisconnect(ConnectionId connection);
  // Ends a session past its timeout and forgets expired session ids. Call periodically.
  void CheckTimeouts();

  // Whether `connection` owns the running session (admitted, filling, ready or releasing).
  bool OwnsSession(ConnectionId connection) const;
  // Whether a session runs (any phase).
  bool HasSession() const;
  // While the running session answers rounds (a device has its fill notice and the session is not
  // ending): its name and phase, "session <hex id> (holding rounds)" until its first proof-shaped
  // round (proto/session_rules.h IsProofRound) was answered, "... (proof rounds)" from then on;
  // else empty. round_polling.h polls while it is not empty, with a budget per value.
  std::string AnsweringRounds() const;

  // Ends any session with `reason` and waits until idle (fill threads stopped, memory freed).
  void Shutdown(const std::string& reason);
  // Waits until no session runs; false if `timeout_us` (microseconds, real time) passed first.
  bool WaitUntilIdle(int64_t timeout_us);

  AgentStatusSnapshot GetStatus() const;
  NodeDescriptionInfo Describe() const;
  const AgentConfig& config() const { return config_; }

 private:
  struct Session;

  // REQUIRES: mu_ held. Each returns `status` after recording it as the last error (and counting
  // it under `reason`, an AgentMetrics::kRefused*).
  Status Refuse(const Status& status, const std::string& what, const char* reason);
  // REQUIRES: mu_ held and session_ set. Ends the session now if it is filled, otherwise asks the
  // fill to stop (it ends the session when it returns).
  void EndSessionLocked(const Status& why);
  // REQUIRES: mu_ held, session_ set and not filling. Frees memory and returns to idle.
  void ReleaseSessionLocked(const Status& why, bool completed);
  // Called by the fill (device_fill.h on_filled), mu_ not held: signs slot i's fill notice and wakes
  // the deviceFilled calls waiting for it.
  void OnDeviceFilled(Session& s, size_t i);
  // REQUIRES: mu_ not held. Ends an admitted session whose fill never started (Admitted dropped).
  void AbandonAdmitted();
  Status AnswerRoundLocked(Session& s, proto::ChallengeRound::Reader round, proto::RoundAnswer::Builder answer,
                           int64_t started_us);
  // REQUIRES: mu_ held. Starts every device's lookup of the round, then waits for each.
  Status LookUpRoundLocked(Session& s, proto::ChallengeRound::Reader round, proto::RoundAnswer::Builder answer);
  // REQUIRES: mu_ held. HashAnsweredRound's work; returns the hashing error (the caller ends the session).
  Status HashAnsweredRoundLocked(Session& s);
  StatusOr<proto::SignedEnvelope> FinishDecoded(ConnectionId from, const StatusOr<proto::SignedEnvelope>& verdict);
  StatusOr<proto::SignedEnvelope> FinishLocked(Session& s, const proto::SignedEnvelope& verdict);
  proto::AgentPhase PhaseLocked() const;
  void SetPhaseSinceLocked();

  const AgentConfig config_;
  const BackendSet backends_;
  const Clock& clock_;
  const int64_t start_unix_us_;
  const proto::KeyId node_key_id_;

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;   // signalled when session_ becomes null
  std::unique_ptr<Session> session_;  // guarded by mu_
  SeenSessions seen_;                 // guarded by mu_
  int64_t phase_since_unix_us_ = 0;   // guarded by mu_
  uint64_t last_fill_micros_ = 0;     // guarded by mu_
  uint32_t last_round_micros_ = 0;    // guarded by mu_
  uint64_t sessions_completed_ = 0;   // guarded by mu_
  std::string last_error_;            // guarded by mu_
  std::string last_ended_;            // guarded by mu_: "session <id> ended: <why>"
  SessionId last_ended_id_{};         // guarded by mu_: that session's id (all zero: none yet)
};

}  // namespace wipeproof

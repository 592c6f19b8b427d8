// The agent's end of a round channel (wipe.capnp "Round channel"; docs/protocol.md "The round
// channel"): the rounds of a running session on a second connection of the challenger that owns
// it, as flat Cap'n Proto messages without the RPC system, whose calls, returns and finishes cost
// a round about 25-30 us on the reference VM (docs/benchmarks.md "Where the transport's time goes:
// the floors"). AgentRpcServer makes one when an authenticated connection's first 8 bytes are
// roundChannelPreface.
//
// What it accepts, in order:
//   - one RoundChannelHello within `hello_timeout_us`: AgentCore::RedeemRoundChannel must accept
//     its session id and token for the connection's authenticated key (the token was asked for by
//     the session's owner connection, and each is good for one hello) -> `ready`; anything else ->
//     `refused`, and the channel closes;
//   - then rounds, each read only after the previous answer went out (one in flight): the round's
//     session id must be the hello's; AgentCore::AnswerRound answers it for the owner connection
//     (every check of ProverAgent.round: index, devices, ranges, notices) -> `answer`, and then
//     the round joins the transcript (HashAnsweredRound);
//   - after the hello, every refusal (a bad round, a second hello, a request of an unknown kind, a
//     malformed or oversized message) ends the session, as a bad round call does (the
//     protocol-error policy): `refused`, the session's memory freed, the channel closed;
//   - every message is read with the RPC connection's bounds (proto::RpcReaderOptions: at most
//     kMaxRpcMessageBytes, fewer than 512 segments), checked on its segment table before the rest
//     is read; messages go through a proto::FlatMessageStream (each reply in one piece, each
//     request in as few reads as the stream allows), and replies are built in a kept first segment:
//     no allocation per round at q = 256.
// The channel closes when the peer closes it, after a refusal, when its session no longer runs for
// its owner (checked every `watch_interval_us`), or when the server closes it (a newer channel of
// the same owner, the server's end). Closing it between messages never ends the session (the
// owner's connection does); a message cut off is a malformed one.
//
// Thread-safety: the event loop thread of `stream` and `timer`; the core is thread-safe.
#pragma once

#include <capnp/common.h>
#include <kj/async-io.h>
#include <kj/function.h>
#include <kj/timer.h>

#include <cstdint>
#include <optional>
#include <string>

#include "proto/flat_message_stream.h"
#include "prover/agent/agent_core.h"

namespace wipeproof {

struct RoundChannelOptions {
  int64_t hello_timeout_us = 10'000'000;  // microseconds from the preface to the hello; > 0
  int64_t watch_interval_us = 1'000'000;  // microseconds between checks that the session runs; > 0
};

class RoundChannel {
 public:
  // `on_bound` runs once, when the hello is accepted, with the owner connection.
  // REQUIRES: `core` and `timer` outlive the channel.
  RoundChannel(AgentCore& core, kj::Timer& timer, kj::Own<kj::AsyncIoStream> stream, PeerKeyId authenticated_as,
               RoundChannelOptions options, kj::Function<void(ConnectionId owner)> on_bound);
  RoundChannel(const RoundChannel&) = delete;
  RoundChannel& operator=(const RoundChannel&) = delete;

  // Serves the channel until it closes (see the top of the file); never rejects. Call once.
  kj::Promise<void> Serve();

  // The owner connection once the hello was accepted.
  std::optional<ConnectionId> owner() const { return owner_; }
  // Why the channel closed ("the peer closed the channel", a refusal's status, ...); empty before.
  const std::string& closed_because() const { return closed_because_; }
  uint64_t rounds_answered() const { return rounds_answered_; }
  // Whether it closed after refusing a request (or a malformed message).
  bool refused() const { return refused_; }

 private:
  kj::Promise<void> ReadRequests();
  // Answers one request; resolves once its reply is written (and, for an answer, the round hashed).
  // Sets closed_because_ when the channel must close after this reply.
  kj::Promise<void> Reply(capnp::MessageReader& request);
  kj::Promise<void> Watch();

  AgentCore& core_;
  kj::Timer& timer_;
  kj::Own<kj::AsyncIoStream> stream_;
  proto::FlatMessageStream messages_;
  // A reply's first segment, all zeros between replies (capnp::MallocMessageBuilder's rule: it
  // zeroes what it used when it goes).
  kj::Array<capnp::word> reply_segment_;
  const PeerKeyId authenticated_as_;
  const RoundChannelOptions options_;
  kj::Function<void(ConnectionId)> on_bound_;
  const kj::TimePoint opened_;
  std::optional<ConnectionId> owner_;
  SessionId session_{};
  uint64_t rounds_answered_ = 0;
  std::string closed_because_;
  bool refused_ = false;
};

}  // namespace wipeproof

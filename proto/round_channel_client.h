// The challenger's end of a round channel (wipe.capnp "Round channel"; the agent's end is
// prover/agent/round_channel.h): on a connection already authenticated (TLS 1.3 to the pinned node
// certificate), the preface and a hello with the token ProverAgent.openRoundChannel returned, then
// one round at a time as flat Cap'n Proto messages, without the RPC system.
//
// Usage: Open(session, token), then for each round: build a RoundChannelRequest whose `round` is set
// (InitRound), Send() it, and read answer() until the next Send(). Messages go through a
// FlatMessageStream (proto/flat_message_stream.h): each in one piece, each read in as few reads as
// the stream allows, the buffers reused.
//
// Errors: a refusal (RoundChannelReply.refused) rejects the promise with the agent's Status as
// StatusToException makes it (proto/rpc_status.h: ExceptionToStatus gives it back); a malformed
// reply (a pointer out of bounds anywhere in it, or a reply of another kind than the request's)
// rejects with kj's FAILED exception, as does a failed stream (DISCONNECTED when it closed).
// Replies are read with RpcReaderOptions() (the RPC bounds, checked on a reply's segment table
// before it is read). Which round an answer belongs to is the caller's check.
//
// Thread-safety: the event loop thread of `stream`; one round at a time (the agent reads the next
// request only after answering the last).
#pragma once

#include <capnp/message.h>
#include <kj/async-io.h>

#include "proto/codec.h"
#include "proto/flat_message_stream.h"
#include "proto/wipe.capnp.h"

namespace wipeproof::proto {

class RoundChannelClient {
 public:
  // REQUIRES: `stream` outlives the client.
  explicit RoundChannelClient(kj::AsyncIoStream& stream) : stream_(stream), messages_(stream, RpcReaderOptions()) {}

  // Writes the preface and the hello; resolves once the agent replied `ready`.
  kj::Promise<void> Open(ByteView session_id, ByteView token);

  // The round of a fresh request in `message` (its root: a RoundChannelRequest).
  static ChallengeRound::Builder InitRound(capnp::MessageBuilder& message);
  // The round of a request InitRound made.
  static ChallengeRound::Reader RoundOf(capnp::MessageBuilder& message);
  // Writes `request` (InitRound's message; its bytes are copied at once, so it may go when Send()
  // returns) and resolves when its answer arrived (then answer()).
  kj::Promise<void> Send(capnp::MessageBuilder& request);
  // The last Send()'s answer, valid until the next Send() is called. REQUIRES: a Send() resolved.
  RoundAnswer::Reader answer();

 private:
  kj::Promise<void> Write(capnp::MessageBuilder& message);
  // Reads one reply; rejects on a refusal or the end of the stream.
  kj::Promise<void> ReadReply(RoundChannelReply::Which expected);

  kj::AsyncIoStream& stream_;
  FlatMessageStream messages_;
  capnp::MessageReader* reply_ = nullptr;  // in messages_
};

}  // namespace wipeproof::proto

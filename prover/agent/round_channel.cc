#include "prover/agent/round_channel.h"

#include <capnp/message.h>
#include <glog/logging.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "common/hex.h"
#include "common/terminal_text.h"
#include "proto/codec.h"
#include "proto/rpc_status.h"

namespace wipeproof {
namespace {

// Texts the peer may have lengthened (a malformed message's description) are cut to this many
// characters in the refusal, in `closed_because()` and in log lines.
constexpr size_t kMaxReasonChars = 300;

// A reply's first segment: a q = 256 answer (8 KiB of labels) fits; larger ones add segments.
constexpr size_t kReplySegmentWords = 1280;

std::string Capped(std::string text) {
  if (text.size() > kMaxReasonChars) text.resize(kMaxReasonChars);
  return text;
}

}  // namespace

RoundChannel::RoundChannel(AgentCore& core, kj::Timer& timer, kj::Own<kj::AsyncIoStream> stream,
                           PeerKeyId authenticated_as, RoundChannelOptions options,
                           kj::Function<void(ConnectionId owner)> on_bound)
    : core_(core),
      timer_(timer),
      stream_(kj::mv(stream)),
      messages_(*stream_, proto::RpcReaderOptions()),
      reply_segment_(kj::heapArray<capnp::word>(kReplySegmentWords)),
      authenticated_as_(authenticated_as),
      options_(options),
      on_bound_(kj::mv(on_bound)),
      opened_(timer.now()) {
  std::memset(reply_segment_.begin(), 0, reply_segment_.size() * sizeof(capnp::word));
}

kj::Promise<void> RoundChannel::Serve() {
  return ReadRequests().exclusiveJoin(Watch()).catch_([this](kj::Exception&& e) {
    if (closed_because_.empty()) closed_because_ = Capped(std::string("stream error: ") + e.getDescription().cStr());
  });
}

kj::Promise<void> RoundChannel::ReadRequests() {
  return messages_.Read().then(
      [this](kj::Maybe<capnp::MessageReader&> maybe) -> kj::Promise<void> {
        KJ_IF_MAYBE (request, maybe) {
          // The request stays valid until the next Read(), after its reply.
          return Reply(*request).then([this]() -> kj::Promise<void> {
            if (!closed_because_.empty()) return kj::READY_NOW;
            return ReadRequests();
          });
        }
        closed_because_ = "the peer closed the channel";
        return kj::READY_NOW;
      },
      [this](kj::Exception&& e) -> kj::Promise<void> {
        if (e.getType() == kj::Exception::Type::DISCONNECTED) {
          closed_because_ = "the peer closed the channel";
          return kj::READY_NOW;
        }
        // A frame over the bounds or a malformed header: refused like a malformed request.
        const Status why = InvalidArgumentError(std::string("malformed message: ") + e.getDescription().cStr());
        if (owner_)
          core_.Abort(*owner_, proto::ByteView(session_.data(), session_.size()), why.ToString()).IgnoreError();
        closed_because_ = Capped(why.ToString());
        refused_ = true;
        LOG_EVERY_T(WARNING, 1) << "round channel: closing (at most one such line a second): "
                                << TerminalSafe(closed_because_);
        return kj::READY_NOW;
      });
}

kj::Promise<void> RoundChannel::Reply(capnp::MessageReader& request) {
  capnp::MallocMessageBuilder message(reply_segment_);
  auto reply = message.initRoot<proto::RoundChannelReply>();
  Status status;
  bool answered = false;
  try {
    auto root = request.getRoot<proto::RoundChannelRequest>();
    switch (root.which()) {
      case proto::RoundChannelRequest::HELLO: {
        if (owner_) {
          status = InvalidArgumentError("a second hello on a round channel");
          break;
        }
        auto hello = root.getHello();
        auto owner = core_.RedeemRoundChannel(hello.getSessionId(), hello.getToken(), authenticated_as_);
        if (!owner.ok()) {
          status = owner.status();
          break;
        }
        owner_ = *owner;
        std::memcpy(session_.data(), hello.getSessionId().begin(), session_.size());
        reply.setReady();
        on_bound_(*owner_);
        break;
      }
      case proto::RoundChannelRequest::ROUND: {
        if (!owner_) {
          status = PermissionDeniedError("a round before the round channel's hello");
          break;
        }
        auto round = root.getRound();
        auto id = round.getSessionId();
        if (id.size() != session_.size() || std::memcmp(id.begin(), session_.data(), session_.size()) != 0) {
          status =
              InvalidArgumentError("a round for another session (a " + std::to_string(id.size()) +
                                   "-byte id) on the round channel of session " +
                                   HexEncode(session_.data(), session_.size()));
          break;
        }
        status = core_.AnswerRound(*owner_, round, reply.initAnswer());
        answered = status.ok();
        break;
      }
      default:
        status = InvalidArgumentError("a round channel request of an unknown kind");
        break;
    }
  } catch (const kj::Exception& e) {
    // A pointer out of bounds, a traversal over the limit: capnp's reader throws on the first use.
    status = InvalidArgumentError(std::string("malformed request: ") + e.getDescription().cStr());
  }
  if (!status.ok()) {
    // After the hello every refusal ends the session (the protocol-error policy of
    // ProverAgent.round; AnswerRound has ended it already where it refused a round).
    if (owner_)
      core_.Abort(*owner_, proto::ByteView(session_.data(), session_.size()), status.ToString()).IgnoreError();
    closed_because_ = Capped(status.ToString());
    refused_ = true;
    LOG_EVERY_T(WARNING, 1) << "round channel: refused, closing (at most one such line a second): "
                            << TerminalSafe(closed_because_);
    reply.setRefused(std::string(proto::kStatusExceptionPrefix) + closed_because_);
  }
  auto written = messages_.Write(message);  // copies the message: the builder may go
  if (!answered) return written;
  ++rounds_answered_;
  // After the answer went out (issue "Fast rounds"), once the event loop has nothing else ready
  // (evalLast: a peer on the same loop reads its answer first), the round joins the transcript;
  // only then is the next request read.
  return written.then([this]() { return kj::evalLast([this]() { core_.HashAnsweredRound(); }); });
}

kj::Promise<void> RoundChannel::Watch() {
  kj::Duration delay = options_.watch_interval_us * kj::MICROSECONDS;
  if (!owner_) {
    const kj::Duration left = options_.hello_timeout_us * kj::MICROSECONDS - (timer_.now() - opened_);
    if (left <= 0 * kj::MICROSECONDS) {
      closed_because_ = "no hello within " + std::to_string(options_.hello_timeout_us) + " us";
      return kj::READY_NOW;
    }
    delay = std::min(delay, left);
  } else if (!core_.SessionRunsFor(*owner_, session_)) {
    closed_because_ = "its session no longer runs";
    return kj::READY_NOW;
  }
  return timer_.afterDelay(delay).then([this]() { return Watch(); });
}

}  // namespace wipeproof

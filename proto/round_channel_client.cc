#include "proto/round_channel_client.h"

#include <kj/debug.h>

#include <algorithm>
#include <utility>

#include "proto/rpc_status.h"

namespace wipeproof::proto {
namespace {

constexpr size_t kMaxRefusalChars = 4096;  // of a refusal's text: the agent's are a few hundred

}  // namespace

kj::Promise<void> RoundChannelClient::Open(ByteView session_id, ByteView token) {
  const capnp::Data::Reader preface = ROUND_CHANNEL_PREFACE.get();
  auto message = kj::heap<capnp::MallocMessageBuilder>(32u);
  auto hello = message->initRoot<RoundChannelRequest>().initHello();
  hello.setSessionId(session_id);
  hello.setToken(token);
  return stream_.write(preface.begin(), preface.size())
      .then([this, message = kj::mv(message)]() mutable { return Write(*message); })
      .then([this]() { return ReadReply(RoundChannelReply::READY); });
}

ChallengeRound::Builder RoundChannelClient::InitRound(capnp::MessageBuilder& message) {
  return message.initRoot<RoundChannelRequest>().initRound();
}

ChallengeRound::Reader RoundChannelClient::RoundOf(capnp::MessageBuilder& message) {
  return message.getRoot<RoundChannelRequest>().asReader().getRound();
}

kj::Promise<void> RoundChannelClient::Send(capnp::MessageBuilder& request) {
  return Write(request).then([this]() { return ReadReply(RoundChannelReply::ANSWER); });
}

RoundAnswer::Reader RoundChannelClient::answer() {
  KJ_REQUIRE(reply_ != nullptr, "round channel: no answer read");
  return reply_->getRoot<RoundChannelReply>().getAnswer();
}

kj::Promise<void> RoundChannelClient::Write(capnp::MessageBuilder& message) { return messages_.Write(message); }

kj::Promise<void> RoundChannelClient::ReadReply(RoundChannelReply::Which expected) {
  reply_ = nullptr;
  return messages_.Read().then([this, expected](kj::Maybe<capnp::MessageReader&> maybe) {
    capnp::MessageReader* reader = nullptr;
    KJ_IF_MAYBE (r, maybe) {
      reader = r;
    }
    if (reader == nullptr) kj::throwFatalException(KJ_EXCEPTION(DISCONNECTED, "round channel: the agent closed it"));
    // Every pointer of the reply is checked here (a malformed one throws now, rejecting the
    // promise), not later in a reader of answer().
    reader->getRoot<capnp::AnyPointer>().targetSize();
    auto reply = reader->getRoot<RoundChannelReply>();
    if (reply.which() == RoundChannelReply::REFUSED) {
      // The agent's Status, as an RPC call's exception carries it.
      const capnp::Text::Reader text = reply.getRefused();
      kj::throwFatalException(kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__,
                                            kj::heapString(text.begin(), std::min(text.size(), kMaxRefusalChars))));
    }
    // Not the agent's word but a malformed exchange (not a wipeproof Status).
    KJ_REQUIRE(reply.which() == expected, "round channel: a reply of another kind than the request's",
               static_cast<int>(reply.which()), static_cast<int>(expected));
    reply_ = reader;
  });
}

}  // namespace wipeproof::proto

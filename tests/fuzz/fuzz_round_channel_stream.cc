// The round channel's framing on the agent's side (proto/flat_message_stream.h, as
// prover/agent/round_channel.cc reads requests and writes replies): the input's first byte sets how
// many bytes each read of the stream gets (1 to 256), the rest is what arrives on the channel. Up
// to 8 messages are read under RpcReaderOptions until the stream ends or a message is refused; each
// is read as a RoundChannelRequest, and a round goes to AgentCore::AnswerRound on the filled session
// of the fixed order (fuzz_agent.h), whose reply is written back through the same stream. Every
// exception FlatMessageStream or capnp's reader throws is a refusal the channel turns into
// `refused`; anything else (a crash, a read past the input, a leak) is a bug.
#include <capnp/message.h>

#include <algorithm>
#include <cstring>

#include "proto/flat_message_stream.h"
#include "proto/wipe.capnp.h"
#include "tests/fuzz/fuzz_agent.h"

namespace {

// The input, `chunk` bytes per read at most; writes are counted and dropped.
class InputStream final : public kj::AsyncIoStream {
 public:
  InputStream(const uint8_t* data, size_t size, size_t chunk) : data_(data), size_(size), chunk_(chunk) {}
  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override {
    const size_t left = size_ - at_;
    const size_t n = std::min(left, std::max(min_bytes, std::min(chunk_, max_bytes)));
    std::memcpy(buffer, data_ + at_, n);
    at_ += n;
    return n;
  }
  kj::Promise<void> write(const void*, size_t size) override {
    written += size;
    return kj::READY_NOW;
  }
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override {
    for (auto piece : pieces) written += piece.size();
    return kj::READY_NOW;
  }
  kj::Promise<void> whenWriteDisconnected() override { return kj::NEVER_DONE; }
  void shutdownWrite() override {}
  size_t written = 0;

 private:
  const uint8_t* data_;
  size_t size_;
  size_t chunk_;
  size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size == 0) return 0;
  kj::EventLoop loop;
  kj::WaitScope wait_scope(loop);
  InputStream stream(data + 1, size - 1, size_t{data[0]} + 1);
  proto::FlatMessageStream messages(stream, proto::RpcReaderOptions());
  auto fixture = fuzz::NewFilledAgent();
  for (int i = 0; i < 8; ++i) {
    capnp::MallocMessageBuilder reply;
    try {
      kj::Maybe<capnp::MessageReader&> maybe = messages.Read().wait(wait_scope);
      capnp::MessageReader* request = nullptr;
      KJ_IF_MAYBE (r, maybe) {
        request = r;
      }
      if (request == nullptr) break;  // the stream ended between messages
      auto root = request->getRoot<proto::RoundChannelRequest>();
      if (root.which() != proto::RoundChannelRequest::ROUND) continue;
      (void)fixture->core->AnswerRound(fuzz::kOwner, root.getRound(),
                                       reply.initRoot<proto::RoundChannelReply>().initAnswer());
    } catch (const kj::Exception&) {
      break;  // refused: the channel replies `refused` and closes
    }
    messages.Write(reply).wait(wait_scope);
  }
  fixture->core->Shutdown("fuzz input done");
  return 0;
}

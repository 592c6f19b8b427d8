// The challenger receiving a RoundAnswer (unsigned; Session::CheckAnswer in
// challenger/session/session_runner.cc): the input is the RPC-framed answer, read under RpcReaderOptions;
// then, as CheckAnswer does, WalkMessage and ValidateShape on the reader, the field reads, and the
// transcript hash over a fixed round and this answer (canonicalising the answer).
#include <capnp/message.h>

#include <cstdlib>

#include "challenger/session/failure.h"
#include "proto/transcript.h"
#include "proto/validate.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// A fixed, valid round: session 0xA5.. 01, round 0, two devices with four indices each.
const wipeproof::proto::Bytes& FixedRound() {
  static const wipeproof::proto::Bytes bytes = [] {
    using namespace wipeproof;
    capnp::MallocMessageBuilder m;
    auto round = m.initRoot<proto::ChallengeRound>();
    proto::Bytes id(proto::kSessionIdBytes, 0xA5);
    id.back() = 1;
    round.setSessionId(proto::AsView(id));
    auto devices = round.initDevices(2);
    for (unsigned d = 0; d < 2; ++d) {
      devices[d].setDeviceIndex(static_cast<uint16_t>(d));
      auto indices = devices[d].initLabelIndices(4);
      for (unsigned k = 0; k < 4; ++k) indices.set(k, d * 64 + k * 16);
    }
    auto encoded = proto::EncodeCanonical(round.asReader());
    if (!encoded.ok()) std::abort();
    return *encoded;
  }();
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  static const auto round = proto::ParseMessage<proto::ChallengeRound>(proto::AsView(FixedRound()));
  if (!round.ok()) std::abort();
  fuzz::WithRpcRoot<proto::RoundAnswer>(data, size, [&](proto::RoundAnswer::Reader answer) {
    Status shape = proto::WalkMessage(answer);
    if (shape.ok()) shape = proto::ValidateShape(answer);
    if (!shape.ok()) {
      (void)PeerText(shape.message());
      return;
    }
    (void)PeerHex(answer.getSessionId().begin(), answer.getSessionId().size());
    (void)answer.getRoundIndex();
    (void)answer.getLabels().size();
    proto::TranscriptHasher hasher;
    const proto::Bytes order(64, 1), report(64, 2);
    if (!hasher.AddOrder(proto::AsView(order)).ok() || !hasher.AddReport(proto::AsView(report)).ok()) std::abort();
    Status hashed = hasher.AddRound(round->root(), answer);
    if (!hashed.ok()) {
      (void)PeerText(hashed.message());
      return;
    }
    if (!hasher.Finish().ok()) std::abort();
  });
  return 0;
}

// The challenger receiving the fill report startSession returns (Session::RunFill, CheckReport). Byte 0:
//   0: the rest is the RPC-framed result Envelope: DecodeEnvelope(Envelope::Reader), then the
//      checks (the signature fails for random bytes, as it should)
//   1: the rest is a FillReport payload, signed with the node key the challenger trusts, so the
//      parse and field reads after the signature check are reached
#include "tests/fuzz/fuzz_challenger_checks.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 2;
  ++data, --size;
  const proto::KeyPair& node = fuzz::FuzzKey(fuzz::kNodeSeed);
  if (mode == 0) {
    fuzz::WithRpcRoot<proto::Envelope>(data, size, [&](proto::Envelope::Reader reader) {
      auto envelope = proto::DecodeEnvelope(reader);
      if (!envelope.ok()) {
        (void)AgentText(envelope.status().ToString());
        return;
      }
      fuzz::CheckFillReportLikeChallenger(*envelope, node.public_key);
    });
  } else {
    proto::SignedEnvelope envelope;
    if (!fuzz::SignFuzzPayload(proto::MessageKind::FILL_REPORT, data, size, node, &envelope)) return 0;
    fuzz::CheckFillReportLikeChallenger(envelope, node.public_key);
  }
  return 0;
}

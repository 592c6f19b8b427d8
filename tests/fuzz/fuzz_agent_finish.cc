// The agent's finish() and abort() on a filled session of the fixed order (fuzz_agent.h). Byte 0:
//   0: the rest is a Verdict payload, signed with the challenger key the agent trusts:
//      Finish(SignedEnvelope) reaches VerifyAndParse<Verdict> and the session/order digest checks
//   1: the rest is an RPC-framed Envelope: Finish(Envelope::Reader) (decoding, then verification)
//   2: abort(sessionId, reason): byte 1 picks the calling connection (owner or not) and the
//      session id's length (0-31 bytes), the bytes after them are the id then the reason
#include <algorithm>
#include <string>

#include "tests/fuzz/fuzz_agent.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 3;
  ++data, --size;
  if (mode == 0) {
    proto::SignedEnvelope verdict;
    if (!fuzz::SignFuzzPayload(proto::MessageKind::VERDICT, data, size, agent_test::ChallengerKey(), &verdict)) {
      return 0;
    }
    auto fixture = fuzz::NewFilledAgent();
    (void)fixture->core->Finish(fuzz::kOwner, verdict);
    fixture->core->Shutdown("fuzz input done");
  } else if (mode == 1) {
    auto fixture = fuzz::NewFilledAgent();
    fuzz::WithRpcRoot<proto::Envelope>(data, size, [&](proto::Envelope::Reader verdict) {
      (void)fixture->core->Finish(fuzz::kOwner, verdict);
    });
    fixture->core->Shutdown("fuzz input done");
  } else {
    if (size < 1) return 0;
    const ConnectionId from = (data[0] & 0x80) ? fuzz::kOwner + 1 : fuzz::kOwner;
    const size_t id_bytes = std::min<size_t>(data[0] & 0x1f, size - 1);
    const proto::ByteView session_id(data + 1, id_bytes);
    const std::string reason = fuzz::TextOf(data + 1 + id_bytes, size - 1 - id_bytes);
    auto fixture = fuzz::NewFilledAgent();
    (void)fixture->core->Abort(from, session_id, reason);
    (void)fixture->core->GetStatus();
    fixture->core->Shutdown("fuzz input done");
  }
  return 0;
}

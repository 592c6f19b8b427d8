// The agent's round() (AgentCore::AnswerRound) on a filled session of the fixed order
// (fuzz_agent.h): the input is up to 4 RPC-framed ChallengeRound messages one after the other
// (each a segment table and its segments, as they arrive on the connection, read under
// RpcReaderOptions), answered in order; then finish() with a valid verdict, so the transcript over
// the rounds answered is signed too. A refused round ends the session (protocol-error policy); the
// rounds after it must then be refused without a crash.
#include <capnp/serialize.h>

#include <cstring>
#include <optional>

#include "tests/fuzz/fuzz_agent.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  const size_t words = size / sizeof(capnp::word);
  if (words == 0) return 0;
  kj::Array<capnp::word> aligned = kj::heapArray<capnp::word>(words);
  std::memcpy(aligned.begin(), data, words * sizeof(capnp::word));
  kj::ArrayPtr<const capnp::word> rest = aligned.asPtr();

  auto fixture = fuzz::NewFilledAgent();
  for (int i = 0; i < 4 && rest.size() > 0; ++i) {
    std::optional<capnp::FlatArrayMessageReader> reader;
    proto::ChallengeRound::Reader round;
    try {
      reader.emplace(rest, proto::RpcReaderOptions());
      rest = kj::arrayPtr(reader->getEnd(), rest.end());
      round = reader->getRoot<proto::ChallengeRound>();
    } catch (const kj::Exception&) {
      break;  // framing or root pointer capnp's RPC layer would refuse before round() runs
    }
    capnp::MallocMessageBuilder answer_message;
    (void)fixture->core->AnswerRound(fuzz::kOwner, round, answer_message.initRoot<proto::RoundAnswer>());
  }
  (void)fixture->core->Finish(fuzz::kOwner, agent_test::SignedVerdict(fuzz::FuzzOrder(), true));
  fixture->core->Shutdown("fuzz input done");
  return 0;
}

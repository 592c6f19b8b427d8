// The challenger receiving the transcript finish returns (Session::FinishOrAbort, CheckTranscript);
// input layout: FuzzNodeSignedMessage (tests/fuzz/fuzz_challenger_checks.h).
#include "tests/fuzz/fuzz_challenger_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  wipeproof::fuzz::FuzzNodeSignedMessage(data, size, wipeproof::proto::MessageKind::TRANSCRIPT_DIGEST,
                                         &wipeproof::fuzz::CheckTranscriptLikeChallenger);
  return 0;
}

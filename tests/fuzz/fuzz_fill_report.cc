// The challenger receiving the fill report startSession returns (Session::RunFill, CheckReport);
// input layout: FuzzNodeSignedMessage (tests/fuzz/fuzz_challenger_checks.h).
#include "tests/fuzz/fuzz_challenger_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  wipeproof::fuzz::FuzzNodeSignedMessage(data, size, wipeproof::proto::MessageKind::FILL_REPORT,
                                         &wipeproof::fuzz::CheckFillReportLikeChallenger);
  return 0;
}

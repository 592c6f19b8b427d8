// Text the challenger takes from the agent: exception descriptions (proto::ExceptionToStatus on
// what a failed RPC call throws, with capnp's or the agent's text) and every text field, made safe
// by PeerText / PeerHex (challenger/session/failure.h). Byte 0 picks the exception type and byte 1 the
// limit; the rest is the text. Checks PeerText's promises: at most max(limit, 64) bytes, no C0
// control characters or DEL, valid UTF-8 (re-sanitising changes nothing: it is idempotent).
#include <kj/exception.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "challenger/session/failure.h"
#include "proto/rpc_status.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void CheckSafe(const std::string& in, size_t limit) {
  using namespace wipeproof;
  const std::string out = PeerText(in, limit);
  if (out.size() > std::max<size_t>(limit, 64)) std::abort();
  for (unsigned char c : out) {
    if (c < 0x20 || c == 0x7f) std::abort();
  }
  if (PeerText(out, limit) != out) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 2) return 0;
  const auto type = static_cast<kj::Exception::Type>(data[0] % 4);  // FAILED .. UNIMPLEMENTED
  const size_t limit = size_t{data[1]} * 8;
  const std::string text = fuzz::TextOf(data + 2, size - 2);
  CheckSafe(text, limit);
  (void)PeerHex(data + 2, size - 2, limit);
  kj::Exception e(type, "agent", 1, kj::heapString(text.data(), text.size()));
  const Status status = proto::ExceptionToStatus(e);
  CheckSafe(status.ToString(), kMaxPeerTextBytes);
  return 0;
}

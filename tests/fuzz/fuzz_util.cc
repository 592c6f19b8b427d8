#include "tests/fuzz/fuzz_util.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

#include <array>
#include <cstdlib>
#include <map>
#include <mutex>

#include "adversary/fixed_keys.h"

namespace wipeproof::fuzz {

const proto::KeyPair& FuzzKey(uint8_t seed_byte) {
  static std::mutex mu;
  static std::map<uint8_t, proto::KeyPair> keys;
  std::lock_guard<std::mutex> lock(mu);
  auto it = keys.find(seed_byte);
  if (it == keys.end()) {
    it = keys.emplace(seed_byte, adversary::FixedKey(seed_byte)).first;
  }
  return it->second;
}

bool SignFuzzPayload(proto::MessageKind kind, const uint8_t* data, size_t size, const proto::KeyPair& key,
                     proto::SignedEnvelope* out) {
  auto signed_envelope = proto::SignEnvelope(kind, proto::ByteView(data, size), key);
  if (!signed_envelope.ok()) return false;
  *out = std::move(signed_envelope).value();
  return true;
}

}  // namespace wipeproof::fuzz

// Every target links this file: keep glog quiet (the code under test logs each refusal at INFO or
// WARNING; at fuzzing speed that is noise and costs time). Errors and crashes still print.
// WIPEPROOF_FUZZ_LOG=1 keeps everything, to see which path an input takes.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const char* verbose = std::getenv("WIPEPROOF_FUZZ_LOG");
  FLAGS_minloglevel = verbose != nullptr && *verbose == '1' ? google::GLOG_INFO : google::GLOG_ERROR;
  FLAGS_logtostderr = true;
  return 0;
}

// The signed node profile `calibrate` reads (proto/node_profile.h,
// challenger/calibration/node_profile_claims.h). Byte 0:
//   0: the rest is the signed document: VerifyNodeProfile under the fixed node key (random bytes
//      stop at the shape checks or the signature), then ParseNodeProfileJson if it verified
//   1: the rest is the profile text, signed here with the node key (SignNodeProfile), then
//      verified and parsed: the parse after the signature check
// and a parsed profile is reduced to claims for a two-device plan (ClaimsFromNodeProfile,
// NodeFillEstimateUs), as `calibrate` does.
// threat-model: T-HOSTILE-JSON
#include "challenger/calibration/node_profile_claims.h"
#include "proto/node_profile.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

void UseProfile(const std::string& text) {
  using namespace wipeproof;
  auto profile = ParseNodeProfileJson(text);
  if (!profile.ok()) return;
  const std::vector<PlannedDeviceRef> plan = {{"host", uint64_t{1} << 30, uint64_t{2} << 30},
                                              {"GPU-00000000-fake-0000-0000-000000000001", uint64_t{8} << 30,
                                               uint64_t{16} << 30}};
  for (LabelFormat format : {LabelFormat::kC1, LabelFormat::k192}) {
    for (uint32_t m : {uint32_t{1}, uint32_t{4096}, uint32_t{1} << 20}) {
      (void)ClaimsFromNodeProfile(*profile, plan, format, m);
      for (const NodeDeviceProfile& d : profile->devices) (void)NodeFillEstimateUs(d, format, m, uint64_t{1} << 30);
    }
  }
  (void)profile->FindDevice("host");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 2;
  const std::string text = fuzz::TextOf(data + 1, size - 1);
  const proto::KeyPair& node = fuzz::FuzzKey(fuzz::kNodeSeed);
  std::string document = text;
  if (mode == 1) {
    auto signed_document = proto::SignNodeProfile(text, node);
    if (!signed_document.ok()) return 0;
    document = *signed_document;
  }
  auto verified = proto::VerifyNodeProfile(document, node.public_key);
  if (mode == 1 && (!verified.ok() || *verified != text)) __builtin_trap();  // a signed profile must verify
  if (verified.ok()) UseProfile(*verified);
  return 0;
}

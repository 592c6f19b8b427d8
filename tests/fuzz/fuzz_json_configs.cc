// The challenger's JSON configuration files, as an operator (or whoever can write them) hands
// them over: one target per document, selected at build time by WP_FUZZ_DOCUMENT:
//   1 inventory (challenger/fleet/inventory.h ParseInventoryJson, and ReadSignedInventory as the audits
//     read a ledger's copy; public_key_file paths resolve under a
//     folder that does not exist, so the fuzzer reads no files)
//   2 profile (challenger/parameters/parameter_profile.h ParseProfileJson, which validates too)
//   3 adversary classes (challenger/parameters/adversary_classes.h ParseAdversaryClassesJson)
// All three go through ParseJsonText (json_fields.h: duplicate keys, typed fields, paths in errors).
// threat-model: T-HOSTILE-JSON
#include "challenger/fleet/inventory.h"
#include "challenger/parameters/adversary_classes.h"
#include "challenger/parameters/parameter_profile.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  const std::string text = fuzz::TextOf(data, size);
#if WP_FUZZ_DOCUMENT == 1
  (void)ReadSignedInventory(text, "a signed inventory");  // as the audits read a ledger's copy
  auto inventory = ParseInventoryJson(text, "/nonexistent/wipeproof-fuzz", "inventory.json");
  if (inventory.ok()) {
    for (const InventoryNode& node : inventory->nodes) (void)CheckAddress(node.address);
  }
#elif WP_FUZZ_DOCUMENT == 2
  auto profile = ParseProfileJson(text, "profile.json");
  if (profile.ok()) (void)ValidateProfile(*profile);
#elif WP_FUZZ_DOCUMENT == 3
  (void)ParseAdversaryClassesJson(text, "classes.json");
#else
#error "WP_FUZZ_DOCUMENT must be 1, 2 or 3"
#endif
  return 0;
}

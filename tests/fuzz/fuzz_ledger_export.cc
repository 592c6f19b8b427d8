// An exported ledger (`ledger verify --export`, an auditor's input; challenger/ledger/ledger_export.h):
// the input is the JSON document, parsed as cli_ledger.cc does (nlohmann::ordered_json), then
// ExportedDocuments, VerifyExportedHead and VerifyLedgerExport under the fixed challenger key. Signatures stop
// random heads; the document's shape checks and hex decoding are what this reaches.
// threat-model: T-HOSTILE-JSON
#include "challenger/ledger/ledger_export.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  const auto document =
      nlohmann::ordered_json::parse(data, data + size, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return 0;
  const proto::PublicKey& challenger = fuzz::FuzzKey(fuzz::kChallengerSeed).public_key;
  (void)ExportedDocuments(document);  // the documents' shape and digests: checked before the head's signature
  (void)VerifyExportedHead(document, challenger);
  (void)VerifyLedgerExport(document, challenger);
  return 0;
}

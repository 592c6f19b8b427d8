// A ledger record as `ledger verify`, `ledger show` and `ledger export` read it from the SQLite
// file (challenger/ledger/ledger_records.h): byte 0 is the LedgerRecordKind (0-7, 7 unknown to this
// build), the rest the record bytes. CheckLedgerRecord with and without the challenger key (without
// it the parse behind the verdict and receipt signatures is reached), SummarizeLedgerRecord and
// SummaryLine, and LedgerRecordToJson (`ledger decode --record`). The record's session must be
// 0xA5 x15, 0x01 (the corpus uses it).
#include "challenger/ledger/ledger_record_json.h"
#include "challenger/ledger/ledger_records.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 1) return 0;
  const auto kind = static_cast<proto::LedgerRecordKind>(data[0] % 8);
  const proto::ByteView record(data + 1, size - 1);
  proto::Bytes session_id(proto::kSessionIdBytes, 0xA5);
  session_id.back() = 1;
  const proto::PublicKey& challenger = fuzz::FuzzKey(fuzz::kChallengerSeed).public_key;
  (void)CheckLedgerRecord(kind, record, proto::AsView(session_id), nullptr);
  (void)CheckLedgerRecord(kind, record, proto::AsView(session_id), &challenger);
  const nlohmann::ordered_json summary = SummarizeLedgerRecord(kind, record);
  (void)SummaryLine(summary);
  (void)summary.dump();
  const auto json = LedgerRecordToJson(kind, record);
  if (json.ok()) (void)json->dump();
  return 0;
}

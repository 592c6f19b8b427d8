// A ledger row as read back from the SQLite file (challenger/ledger/ledger_verify.h VerifyLedgerRow and
// ChainVerifier::Next). Byte 0:
//   0: the rest is the row's envelope column as stored (EncodeEnvelope bytes); the other columns
//      are those of a genesis entry. Random bytes stop at decoding or the signature.
//   1: the rest is a LedgerEntry payload, signed here with the challenger key, and the row's
//      columns are taken from the entry when it parses, so steps 5-9 (the parse, sequence, chain,
//      columns and the record itself) are reached.
#include "challenger/ledger/ledger_verify.h"
#include "proto/codec.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace wipeproof;
  if (size < 1) return 0;
  const uint8_t mode = data[0] % 2;
  ++data, --size;
  const proto::KeyPair& challenger = fuzz::FuzzKey(fuzz::kChallengerSeed);
  LedgerRow row;
  row.kind = 1;
  if (mode == 0) {
    row.envelope = fuzz::BytesOf(data, size);
  } else {
    proto::SignedEnvelope envelope;
    if (!fuzz::SignFuzzPayload(proto::MessageKind::LEDGER_ENTRY, data, size, challenger, &envelope)) return 0;
    row.envelope = proto::EncodeEnvelope(envelope);
    auto entry = proto::ParseMessage<proto::LedgerEntry>(proto::AsView(envelope.payload));
    if (entry.ok()) {
      row.sequence = entry->root().getSequence();
      row.kind = static_cast<int64_t>(entry->root().getKind());
      auto sid = entry->root().getSessionId();
      row.session_id.assign(sid.begin(), sid.end());
      row.recorded_at_unix_us = entry->root().getRecordedAtUnixUs();
    }
  }
  const proto::Digest digest = LedgerEntryDigest(proto::AsView(row.envelope));
  row.entry_digest.assign(digest.begin(), digest.end());
  (void)VerifyLedgerRow(row, challenger.public_key);
  ChainVerifier chain(challenger.public_key);
  (void)chain.Next(row);
  (void)chain.Finish();
  return 0;
}

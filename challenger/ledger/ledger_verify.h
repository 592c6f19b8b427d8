// Verification of ledger entries (challenger/ledger/ledger.h) one row at a time, in sequence order. Used by
// Ledger::Verify (whole chain), Ledger::Open (tail), `ledger show` and `ledger export`.
//
// For each row, in this order (the first failure names the sequence and what is wrong):
//   1. the row's sequence is the next one expected        else "entry N is missing" (deleted)
//   2. the envelope decodes and is a ledgerEntry envelope  else "not a signed ledger entry" (modified)
//   3. signerKeyId is the challenger's key id              else "signed by key X" (substituted)
//   4. the Ed25519 signature verifies                      else "signature does not verify" (modified)
//   5. the payload parses as a LedgerEntry                 else "malformed"
//   6. the signed sequence equals the row's                else "row N holds signed entry M" (reordered)
//   7. prevEntryDigest = BLAKE2b-256(previous envelope)    else "chain broken" (an entry before it was
//                                                          removed, reordered or replaced)
//   8. the columns kind/session/time/digest agree          else "column X differs" (modified)
//   9. the record matches its kind (ledger_records.h)      else "record ..." (malformed)
// All failures are DATA_LOSS.
//
// Thread-safety: a ChainVerifier is used by one thread at a time.
#pragma once

#include <cstdint>
#include <optional>

#include "challenger/ledger/ledger_row.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

// An entry that passed verification, decoded.
struct VerifiedEntry {
  uint64_t sequence = 0;
  proto::LedgerRecordKind kind = proto::LedgerRecordKind::UNKNOWN;
  proto::Bytes record;
  proto::Bytes session_id;          // 16 bytes or empty
  int64_t recorded_at_unix_us = 0;  // Unix us, challenger's wall clock
  proto::Digest prev_entry_digest{};
  proto::Digest entry_digest{};  // BLAKE2b-256 of the envelope bytes
};

// BLAKE2b-256 of an entry's envelope bytes: the value the next entry's prevEntryDigest holds.
proto::Digest LedgerEntryDigest(proto::ByteView envelope_bytes);

// Steps 2-6, 8 and 9 for one row on its own (no chain link). Used to anchor a tail check.
StatusOr<VerifiedEntry> VerifyLedgerRow(const LedgerRow& row, const proto::PublicKey& challenger_pub);

class ChainVerifier {
 public:
  // Starts at the genesis entry: sequence 0, previous digest 32 zero bytes.
  explicit ChainVerifier(const proto::PublicKey& challenger_pub);
  // Starts in the middle of the chain: the next row must be `next_sequence` and link to `prev_digest`.
  ChainVerifier(const proto::PublicKey& challenger_pub, uint64_t next_sequence, const proto::Digest& prev_digest);

  // An exported head to check against: entry head.sequence must have digest head.digest, and
  // Finish fails if the ledger ends before it.
  void ExpectHead(const LedgerHead& head) { expected_head_ = head; }

  // Checks the next row (all steps above). Errors: DATA_LOSS.
  StatusOr<VerifiedEntry> Next(const LedgerRow& row);
  // Call after the last row. Errors: DATA_LOSS when an expected head lies beyond the last entry.
  Status Finish() const;

  // The head after the rows seen so far (entry_count 0 if none).
  const LedgerHead& head() const { return head_; }

 private:
  proto::PublicKey challenger_pub_;
  uint64_t next_sequence_;
  proto::Digest prev_digest_;
  LedgerHead head_;
  std::optional<LedgerHead> expected_head_;
};

}  // namespace wipeproof

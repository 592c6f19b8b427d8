// Ledger chain verification; the numbered steps are those of ledger_verify.h.
#include "challenger/ledger/ledger_verify.h"

#include <algorithm>
#include <string>

#include "challenger/ledger/ledger_records.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {
namespace {


bool Equal(proto::ByteView a, proto::ByteView b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

Status EntryError(uint64_t sequence, const std::string& what) {
  return DataLossError("ledger entry " + std::to_string(sequence) + ": " + what);
}

}  // namespace

proto::Digest LedgerEntryDigest(proto::ByteView envelope_bytes) { return proto::Blake2b256(envelope_bytes); }

StatusOr<VerifiedEntry> VerifyLedgerRow(const LedgerRow& row, const proto::PublicKey& challenger_pub) {
  const uint64_t n = row.sequence;
  // 2.
  auto envelope = proto::DecodeEnvelope(proto::AsView(row.envelope));
  if (!envelope.ok())
    return EntryError(n, "stored bytes are not a signed entry (modified): " + envelope.status().message());
  if (envelope->kind != proto::MessageKind::LEDGER_ENTRY) {
    return EntryError(
        n, "stored envelope is a " + proto::MessageKindName(envelope->kind) + ", not a ledgerEntry (modified)");
  }
  // 3.
  const proto::KeyId want_key = proto::KeyIdOf(challenger_pub);
  if (envelope->signer_key_id != want_key) {
    return EntryError(n, "signed by key " + proto::KeyIdHex(envelope->signer_key_id) + ", not the challenger key " +
                             proto::KeyIdHex(want_key) + " (substituted or modified)");
  }
  // 4.
  Status signature = proto::VerifySignature(*envelope, proto::MessageKind::LEDGER_ENTRY, challenger_pub);
  if (!signature.ok()) return EntryError(n, "signature does not verify (modified): " + signature.message());
  // 5.
  auto parsed = proto::ParseMessage<proto::LedgerEntry>(proto::AsView(envelope->payload));
  if (!parsed.ok()) return EntryError(n, "signed entry is malformed: " + parsed.status().message());
  proto::LedgerEntry::Reader entry = parsed->root();
  // 6.
  if (entry.getSequence() != n) {
    return EntryError(
        n, "row " + std::to_string(n) + " holds signed entry " + std::to_string(entry.getSequence()) + " (reordered)");
  }
  VerifiedEntry out;
  out.sequence = n;
  out.kind = entry.getKind();
  out.record.assign(entry.getRecord().begin(), entry.getRecord().end());
  out.session_id.assign(entry.getSessionId().begin(), entry.getSessionId().end());
  out.recorded_at_unix_us = entry.getRecordedAtUnixUs();
  std::copy(entry.getPrevEntryDigest().begin(), entry.getPrevEntryDigest().end(), out.prev_entry_digest.begin());
  out.entry_digest = LedgerEntryDigest(proto::AsView(row.envelope));
  // 8.
  if (row.kind != static_cast<int64_t>(out.kind)) {
    return EntryError(n, "column kind is " + std::to_string(row.kind) + ", the signed entry says " +
                             LedgerRecordKindName(out.kind) + " (modified)");
  }
  if (!Equal(proto::AsView(row.session_id), proto::AsView(out.session_id))) {
    return EntryError(n, "column session_id is '" + Hex(proto::AsView(row.session_id)) + "', the signed entry says '" +
                             Hex(proto::AsView(out.session_id)) + "' (modified)");
  }
  if (row.recorded_at_unix_us != out.recorded_at_unix_us) {
    return EntryError(n, "column recorded_at_unix_us is " + std::to_string(row.recorded_at_unix_us) +
                             ", the signed entry says " + std::to_string(out.recorded_at_unix_us) + " (modified)");
  }
  if (!Equal(proto::AsView(row.entry_digest), proto::AsView(out.entry_digest))) {
    return EntryError(n, "column entry_digest does not match the envelope (modified)");
  }
  // 9.
  Status record =
      CheckLedgerRecord(out.kind, proto::AsView(out.record), proto::AsView(out.session_id), &challenger_pub);
  if (!record.ok()) return EntryError(n, record.message());
  return out;
}

ChainVerifier::ChainVerifier(const proto::PublicKey& challenger_pub)
    : ChainVerifier(challenger_pub, 0, proto::Digest{}) {}

ChainVerifier::ChainVerifier(const proto::PublicKey& challenger_pub, uint64_t next_sequence,
                             const proto::Digest& prev_digest)
    : challenger_pub_(challenger_pub), next_sequence_(next_sequence), prev_digest_(prev_digest) {}

StatusOr<VerifiedEntry> ChainVerifier::Next(const LedgerRow& row) {
  const uint64_t n = next_sequence_;
  // 1. Rows come in sequence order, so a larger sequence means rows n .. row.sequence-1 are gone.
  if (row.sequence != n) {
    if (row.sequence > n) {
      const std::string missing =
          row.sequence == n + 1 ? "entry " + std::to_string(n) + " is"
                                : "entries " + std::to_string(n) + ".." + std::to_string(row.sequence - 1) + " are";
      return DataLossError("ledger " + missing + " missing: the ledger goes from entry " +
                           (n == 0 ? std::string("<start>") : std::to_string(n - 1)) + " to " +
                           std::to_string(row.sequence) + " (deleted)");
    }
    return EntryError(n, "rows out of order: got row " + std::to_string(row.sequence) + " (reordered)");
  }
  // 2-6, 8, 9.
  WP_ASSIGN_OR_RETURN(VerifiedEntry entry, VerifyLedgerRow(row, challenger_pub_));
  // 7.
  if (entry.prev_entry_digest != prev_digest_) {
    return EntryError(n, "chain broken: prevEntryDigest " + Hex(entry.prev_entry_digest) + " does not match " +
                             (n == 0 ? std::string("the genesis value (zeros)")
                                     : "entry " + std::to_string(n - 1) + "'s digest " + Hex(prev_digest_)) +
                             " (an entry before it was removed, reordered or replaced)");
  }
  if (expected_head_.has_value() && expected_head_->entry_count > 0 && expected_head_->sequence == n &&
      expected_head_->digest != entry.entry_digest) {
    return EntryError(n, "differs from the exported head (digest " + Hex(entry.entry_digest) + ", the head says " +
                             Hex(expected_head_->digest) + "): the ledger was rewritten after that export");
  }
  prev_digest_ = entry.entry_digest;
  next_sequence_ = n + 1;
  head_.entry_count = n + 1;
  head_.sequence = n;
  head_.digest = entry.entry_digest;
  head_.recorded_at_unix_us = entry.recorded_at_unix_us;
  head_.envelope = row.envelope;
  return entry;
}

Status ChainVerifier::Finish() const {
  if (expected_head_.has_value() && expected_head_->entry_count > 0 && next_sequence_ <= expected_head_->sequence) {
    return DataLossError("ledger ends at entry " +
                         (next_sequence_ == 0 ? std::string("<none>") : std::to_string(next_sequence_ - 1)) +
                         " but an exported head names entry " + std::to_string(expected_head_->sequence) +
                         ": entries were removed from the end");
  }
  return Status::Ok();
}

}  // namespace wipeproof

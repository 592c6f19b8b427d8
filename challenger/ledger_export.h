// `ledger export`: the ledger as a JSON document for auditors, carrying the signed head, and the
// checks an auditor runs on such a document with only the challenger's public key.
//
// Document (format "wipeproof-ledger-export/v1"; digests and ids lowercase hex):
//   {
//     "format", "ledger" (path), "exported_at_unix_us", "exported_at" (UTC, ISO 8601),
//     "challenger_key_id", "challenger_public_key",
//     "chain_rule": how prevEntryDigest is computed (text),
//     "verified": true            -- the whole ledger verified (Ledger::Verify) when exported
//     "session_filter": hex | null,
//     "head": {"entry_count", "sequence", "entry_digest", "recorded_at_unix_us", "recorded_at",
//              "envelope"}        -- envelope: the last entry's signed envelope: the signed head
//     "entries": [{"sequence", "kind", "session_id", "recorded_at_unix_us", "recorded_at",
//                  "record_bytes", "record_digest", "prev_entry_digest", "entry_digest",
//                  "summary" (ledger_records.h), "envelope" (only with include_envelopes)}]
//   }
// The head always covers the whole ledger, also when entries are filtered by session. With
// include_envelopes and no filter the document alone lets an auditor re-verify the whole chain
// (VerifyLedgerExport); later, `ledger verify --expect_head` checks that the ledger still extends
// the exported head.
//
// Thread-safety: free functions; the Ledger's own locking applies.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "challenger/ledger.h"
#include "common/clock.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

inline constexpr char kLedgerExportFormat[] = "wipeproof-ledger-export/v1";

struct LedgerExportOptions {
  std::optional<proto::Bytes> session_id;  // 16 bytes: only that session's entries; unset: all
  bool include_envelopes = false;          // add each entry's signed envelope (hex)
};

// Verifies the whole ledger under `challenger_pub` and builds the document in the same pass (one
// read snapshot), stamped with `clock`. Errors: as Ledger::Verify (PERMISSION_DENIED wrong key,
// DATA_LOSS naming the first bad entry); INVALID_ARGUMENT for a session filter that is not 16 bytes.
StatusOr<nlohmann::ordered_json> ExportLedgerJson(const Ledger& ledger, const proto::PublicKey& challenger_pub,
                                                  const LedgerExportOptions& options, const Clock& clock);

// Checks the signed head of an export document: the head envelope is a ledgerEntry signed by
// `challenger_pub` whose sequence, digest and entry count are those the document states. Returns
// it, ready for Ledger::Verify's expected_head. Errors: INVALID_ARGUMENT (not an export document,
// bad hex), DATA_LOSS (the head does not verify or disagrees with the document).
StatusOr<LedgerHead> VerifyExportedHead(const nlohmann::ordered_json& document, const proto::PublicKey& challenger_pub);

// VerifyExportedHead, then every entry that carries its envelope: its signature and that the
// document's fields agree with it; and, when the document holds every entry with its envelope, the
// whole chain up to the head. Returns the head. Errors: as VerifyExportedHead.
StatusOr<LedgerHead> VerifyLedgerExport(const nlohmann::ordered_json& document, const proto::PublicKey& challenger_pub);

}  // namespace wipeproof

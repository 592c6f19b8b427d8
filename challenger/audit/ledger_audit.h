// `ledger audit`: a ledger export re-verified from the document alone, by someone who trusts
// neither the challenger's summaries nor its verdicts, only the keys they pin.
//
// The auditor pins the authority and challenger keys; node keys come from the export and count only
// where an delegated order names their key id; the schema must be the one the export names.
// What exactly that trusts, and what no record can show (the challenger's own clock):
// docs/audit.md "What the auditor receives, and what they must trust".
// AuditLedgerExport checks the document (ledger_export.h VerifyLedgerExport: the signed
// head, every entry against its envelope, the chain when the export is not filtered) and then
// every session (session_audit.h: signatures, labels recomputed from the seed, deadlines, the
// transcript digest the node signed, the verdict's outcome and bound, the receipt).
//
// Thread-safety: a pure function (label recomputation runs on the options' threads).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "challenger/ledger/ledger_export.h"
#include "challenger/audit/session_audit.h"
#include "challenger/audit/wave_audit.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

// How the error for an export lacking envelopes begins (the CLI reports it as UNVERIFIED, exit 3).
inline constexpr char kExportWithoutRecords[] = "export without records";

// Reads an inventory document the export carries (challenger/fleet/inventory.h ReadSignedInventory,
// which this room may not include: the CLI passes it). `what` names it in errors.
using InventoryReader = std::function<StatusOr<SignedInventory>(const std::string& text, const std::string& what)>;

struct LedgerAuditOptions {
  std::optional<proto::Bytes> session_id;  // 16 bytes: audit only this session; unset: all
  SessionAuditOptions session;
  // Reads the export's inventory documents. Unset: none is read, and every order whose delegation
  // names an inventory fails its audit.
  InventoryReader read_inventory;
};

struct LedgerAudit {
  ExportVerification document;              // the export's own verification: head, entries, whole chain or not
  std::string schema_sha256;                // the export's (equal to this build's kWipeSchemaSha256)
  bool export_lists_authority_key = false;  // and it is the pinned one
  size_t node_keys = 0;                     // node keys the export lists
  std::vector<SessionAudit> sessions;       // in ledger order of their first record
  std::vector<WaveAudit> waves;             // every wave verdict, in ledger order (none with a session filter)
  Status first_failure;                     // OK when every session passed every check; else the first failure
};

// Audits `document` (an export, ledger_export.h) under the pinned keys. Per-session failures are in
// the result (first_failure); errors are for documents that cannot be audited at all:
// as VerifyLedgerExport (PERMISSION_DENIED for another challenger key, DATA_LOSS for an edited
// document); PERMISSION_DENIED when the export lists an authority key other than the pinned one;
// FAILED_PRECONDITION for an export lacking envelopes (nothing in it can be checked: re-export with
// --envelopes), without a schema digest, or written with another schema; NOT_FOUND when the
// session asked for has no record in the export; FAILED_PRECONDITION for a record of no session
// other than a wave verdict (not checked here, so refused); INVALID_ARGUMENT for a session filter
// that is not 16 bytes. Wave verdicts are audited after the sessions (wave_audit.h).
StatusOr<LedgerAudit> AuditLedgerExport(const nlohmann::ordered_json& document, const proto::PublicKey& authority,
                                        const proto::PublicKey& challenger, const LedgerAuditOptions& options);

}  // namespace wipeproof

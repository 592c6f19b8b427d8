#include "challenger/audit/ledger_audit.h"

#include <algorithm>
#include <map>

#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/wipe_schema.h"
#include "common/hex.h"

namespace wipeproof {

namespace {

// A session's wave-complete "held" (its final verdict) against what only its wave shows: in a wave the
// signed inventory declares with other nodes, a wave verdict must list the session, name exactly the
// declared nodes, and each other member's first verdict (the one the challenger knew of when it
// signed this one) must have passed. A wave of this node alone needs nothing more.
Status CheckWaveCompleteClaim(const SessionAudit& session, const std::vector<WaveAudit>& waves,
                              const std::map<proto::Bytes, const SessionAudit*>& by_id, bool waves_audited) {
  const std::vector<std::string>& declared = session.declared_wave_members;
  if (declared.size() == 1 && declared[0] == session.node_name) return Status::Ok();
  const std::string claim = "its verdict says wave-complete held";
  if (!waves_audited) {
    return FailedPreconditionError(claim + ", which only the wave verdict can bear out: audit the whole export");
  }
  const WaveAudit* listing = nullptr;
  for (const WaveAudit& w : waves) {
    if (w.status.ok() && std::find(w.member_sessions.begin(), w.member_sessions.end(), session.session_id) !=
                             w.member_sessions.end()) {
      listing = &w;
    }
  }
  if (listing == nullptr) return DataLossError(claim + ", and no wave verdict lists the session");
  std::vector<std::string> names;
  for (const proto::Bytes& id : listing->member_sessions) {
    auto member = by_id.find(id);
    if (member == by_id.end()) return DataLossError(claim + ", and its wave verdict lists a session the export lacks");
    names.push_back(member->second->node_name);
    if (id != session.session_id && !member->second->first_verdict_pass) {
      return DataLossError(claim + ", and member " + member->second->node_name + " of its wave run failed");
    }
  }
  std::vector<std::string> want = declared;
  std::sort(names.begin(), names.end());
  std::sort(want.begin(), want.end());
  if (names != want) {
    std::string listed, declared_text;
    for (const std::string& n : names) listed += (listed.empty() ? "" : ", ") + n;
    for (const std::string& n : want) declared_text += (declared_text.empty() ? "" : ", ") + n;
    return DataLossError(claim + ", and its wave verdict (ledger entry " + std::to_string(listing->sequence) +
                         ") lists nodes " + listed + ", not the wave's " + declared_text + " the signed inventory declares");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<LedgerAudit> AuditLedgerExport(const nlohmann::ordered_json& document, const proto::PublicKey& authority,
                                        const proto::PublicKey& challenger, const LedgerAuditOptions& options) {
  if (options.session_id.has_value() && options.session_id->size() != proto::kSessionIdBytes) {
    return InvalidArgumentError("audit: session of " + std::to_string(options.session_id->size()) + " bytes, want 16");
  }
  LedgerAudit audit;
  WP_ASSIGN_OR_RETURN(audit.document, VerifyLedgerExport(document, challenger));
  if (audit.document.unverified_entries > 0) {
    return FailedPreconditionError(std::string(kExportWithoutRecords) + ": " +
                                   std::to_string(audit.document.unverified_entries) +
                                   " entries lack their signed envelope, so nothing in them can be audited; "
                                   "re-export with --envelopes");
  }
  if (!document.contains("schema_sha256") || !document.at("schema_sha256").is_string()) {
    return FailedPreconditionError("export: no 'schema_sha256': it does not say which schema its records follow");
  }
  audit.schema_sha256 = document.at("schema_sha256").get<std::string>();
  if (audit.schema_sha256 != kWipeSchemaSha256) {
    return FailedPreconditionError("export: written with the schema of SHA-256 " + audit.schema_sha256 +
                                   ", this auditor decodes with " + kWipeSchemaSha256 + " (" + kWipeSchemaFile +
                                   "): audit it with a wipeproof build of that schema");
  }
  WP_ASSIGN_OR_RETURN(std::optional<proto::PublicKey> listed_authority, ExportedAuthorityKey(document));
  if (listed_authority.has_value()) {
    if (*listed_authority != authority) {
      return PermissionDeniedError("export lists authority key " + proto::KeyIdHex(proto::KeyIdOf(*listed_authority)) +
                                   ", the pinned authority key is " + proto::KeyIdHex(proto::KeyIdOf(authority)) +
                                   " (wrong key given?)");
    }
    audit.export_lists_authority_key = true;
  }
  AuditKeys keys;
  keys.authority = authority;
  keys.challenger = challenger;
  WP_ASSIGN_OR_RETURN(keys.nodes, ExportedNodeKeys(document));
  audit.node_keys = keys.nodes.size();
  WP_ASSIGN_OR_RETURN(std::vector<LedgerDocument> documents, ExportedDocuments(document));
  for (const LedgerDocument& d : documents) {
    if (d.kind != "inventory") continue;
    const std::string what = "the inventory " + HexEncode(d.digest.data(), d.digest.size()) + " the export carries";
    keys.inventories.emplace(d.digest, options.read_inventory
                                           ? options.read_inventory(d.body, what)
                                           : StatusOr<SignedInventory>(FailedPreconditionError(
                                                 what + ": this auditor was given no inventory reader")));
  }

  // Sessions in the order of their first record; each with all its records, in ledger order.
  std::vector<proto::Bytes> order;
  std::map<proto::Bytes, std::vector<const VerifiedEntry*>> sessions;
  std::vector<const VerifiedEntry*> wave_verdicts;
  for (const VerifiedEntry& entry : audit.document.entries) {
    if (entry.session_id.empty() && entry.kind == proto::LedgerRecordKind::WAVE_VERDICT) {
      if (!options.session_id.has_value()) wave_verdicts.push_back(&entry);
      continue;
    }
    if (entry.session_id.size() != proto::kSessionIdBytes) {
      // Fail closed: a record of no session (a wave's, say) states something this auditor does not check.
      return FailedPreconditionError("ledger entry " + std::to_string(entry.sequence) + " (" +
                                     LedgerRecordKindName(entry.kind) +
                                     ") belongs to no session: this auditor does not check such records");
    }
    if (options.session_id.has_value() && entry.session_id != *options.session_id) continue;
    auto& records = sessions[entry.session_id];
    if (records.empty()) order.push_back(entry.session_id);
    records.push_back(&entry);
  }
  if (options.session_id.has_value() && order.empty()) {
    return NotFoundError("export holds no record of session " + HexEncode(*options.session_id));
  }
  for (const proto::Bytes& session : order) {
    audit.sessions.push_back(AuditSession(sessions[session], keys, options.session));
    if (audit.first_failure.ok()) audit.first_failure = audit.sessions.back().status;
  }
  std::map<proto::Bytes, uint64_t> listed;  // member session -> the wave verdict that lists it
  for (const VerifiedEntry* entry : wave_verdicts) {
    audit.waves.push_back(AuditWaveVerdict(*entry, sessions, challenger, &keys.inventories));
    if (audit.waves.back().status.ok()) audit.waves.back().status = CheckListedOnce(audit.waves.back(), &listed);
    if (audit.first_failure.ok()) audit.first_failure = audit.waves.back().status;
  }
  std::map<proto::Bytes, const SessionAudit*> by_id;
  for (const SessionAudit& s : audit.sessions) by_id[s.session_id] = &s;
  for (SessionAudit& s : audit.sessions) {
    if (!s.status.ok() || !s.claims_wave_complete) continue;
    Status held = CheckWaveCompleteClaim(s, audit.waves, by_id, !options.session_id.has_value());
    if (held.ok()) continue;
    s.status = held.WithContext("session " + HexEncode(s.session_id));
    if (audit.first_failure.ok()) audit.first_failure = s.status;
  }
  return audit;
}

}  // namespace wipeproof

#include "challenger/audit/certificate.h"

#include <kj/exception.h>

#include <algorithm>
#include <map>
#include <set>

#include "challenger/audit/certificate_summary.h"
#include "challenger/audit/certificate_text.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/clock.h"
#include "common/hex.h"
#include "common/json_fields.h"
#include "proto/codec.h"
#include "proto/signing.h"

namespace wipeproof {
namespace {

using Json = nlohmann::ordered_json;
using proto::Bytes;

// A session's failed audit that only its wave can settle: its verdict says wave-complete held in a
// wave the signed inventory declares with other nodes, which the evidence of one session cannot show.
std::optional<Status> WaveOnlyClaim(const LedgerAudit& audit, bool by_session) {
  if (!by_session || audit.sessions.size() != 1) return std::nullopt;
  const SessionAudit& s = audit.sessions[0];
  if (s.status.ok() || !s.claims_wave_complete || s.declared_wave_members.size() < 2) return std::nullopt;
  return FailedPreconditionError("session " + HexEncode(s.session_id) +
                                 ": its verdict says wave-complete held in a wave of " +
                                 std::to_string(s.declared_wave_members.size()) +
                                 " nodes, which only that wave's verdict bears out: certify the wave (ledger "
                                 "certificate --wave=NAME --session=" +
                                 HexEncode(s.session_id) + ")");
}

// The node key the session's order names (by node name and key id), from `listed`.
StatusOr<NodeKey> OrderedNodeKey(const Json& session, const std::vector<NodeKey>& listed) {
  const std::string node = session.at("node").get<std::string>();
  const std::string key_id = session.at("node_key_id").get<std::string>();
  for (const NodeKey& key : listed) {
    if (key.name == node && proto::KeyIdHex(proto::KeyIdOf(key.public_key)) == key_id) return key;
  }
  return FailedPreconditionError("session " + session.at("session_id").get<std::string>() +
                                 ": the evidence lists no public key of node " + node + " with key id " + key_id +
                                 ", the one its order names (write the certificate with --inventory)");
}

// outcome.result of a wave: "pass", or the members that failed with their reasons.
std::string WaveResult(bool pass, const Json& sessions) {
  if (pass) return "pass";
  std::string failed;
  for (const Json& s : sessions) {
    if (s.at("outcome").at("pass").get<bool>()) continue;
    failed += (failed.empty() ? "" : ", ") + s.at("node").get<std::string>() + ": " +
              s.at("outcome").at("failure_reason").get<std::string>();
  }
  return failed.empty() ? "fail" : "fail (" + failed + ")";
}

// Entry `sequence` of the ledger's wave verdicts named `wave` (listing `session` when given): the latest.
StatusOr<WaveEntryFilter> FindWave(const Ledger& ledger, const proto::PublicKey& challenger, const std::string& wave,
                                   const std::optional<Bytes>& session) {
  WP_ASSIGN_OR_RETURN(proto::KeyId recorded, ledger.RecordedKeyId());
  if (recorded != proto::KeyIdOf(challenger)) {
    return PermissionDeniedError("ledger " + ledger.path() + " was written by challenger key " +
                                 proto::KeyIdHex(recorded) + ", not key " +
                                 proto::KeyIdHex(proto::KeyIdOf(challenger)) + " (wrong key given?)");
  }
  std::optional<WaveEntryFilter> found;
  std::set<std::string> names;
  ChainVerifier verifier(challenger);
  WP_RETURN_IF_ERROR(ledger.ForEachRow(std::nullopt, [&](const LedgerRow& row) -> Status {
    WP_ASSIGN_OR_RETURN(VerifiedEntry entry, verifier.Next(row));
    if (entry.kind != proto::LedgerRecordKind::WAVE_VERDICT) return Status::Ok();
    WP_ASSIGN_OR_RETURN(proto::SignedEnvelope envelope, proto::DecodeEnvelope(proto::AsView(entry.record)));
    WP_ASSIGN_OR_RETURN(auto verdict, proto::ParseMessage<proto::WaveVerdict>(proto::AsView(envelope.payload)));
    const std::string name(verdict.root().getWaveName().begin(), verdict.root().getWaveName().size());
    names.insert(name);
    if (name != wave) return Status::Ok();
    WaveEntryFilter filter{entry.sequence, {}};
    bool lists = !session.has_value();
    for (auto id : verdict.root().getSessionIds()) {
      filter.session_ids.emplace_back(id.begin(), id.end());
      lists = lists || filter.session_ids.back() == *session;
    }
    if (lists) found = std::move(filter);
    return Status::Ok();
  }));
  WP_RETURN_IF_ERROR(verifier.Finish());
  if (found.has_value()) return *found;
  std::string known;
  for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
  return NotFoundError("ledger " + ledger.path() + " holds no wave verdict of wave '" + wave + "'" +
                       (session.has_value() ? " listing session " + HexEncode(*session) : std::string()) +
                       (known.empty() ? " (it holds no wave verdict)" : " (its waves: " + known + ")"));
}

}  // namespace

StatusOr<Certificate> CertifyEvidence(const Json& evidence, const CertificateTrust& trust) {
  LedgerAuditOptions options;
  options.session.threads = trust.threads;
  options.read_inventory = trust.read_inventory;
  StatusOr<LedgerAudit> audited = InternalError("evidence: not audited");
  try {
    audited = AuditLedgerExport(evidence, trust.authority, trust.challenger, options);
  } catch (const kj::Exception& e) {  // a reader's limit met by malformed or huge records: no certificate
    return InternalError(std::string("evidence: the audit stopped: ") + e.getDescription().cStr());
  }
  WP_ASSIGN_OR_RETURN(LedgerAudit audit, std::move(audited));
  const bool by_session = evidence.contains("session_filter") && !evidence.at("session_filter").is_null();
  const bool by_wave = evidence.contains("wave_filter");
  if (!audit.first_failure.ok()) {
    if (auto claim = WaveOnlyClaim(audit, by_session)) return *claim;
    return Status(audit.first_failure.code(), "evidence: " + audit.first_failure.message());
  }
  if (by_session == by_wave) {
    return FailedPreconditionError(
        "evidence: a certificate's evidence is filtered by one session (session_filter) or "
        "one wave (wave_filter)");
  }
  // The subject's sessions, in its order, each with its records in ledger order.
  std::map<Bytes, std::vector<const VerifiedEntry*>> records;
  const VerifiedEntry* wave_entry = nullptr;
  for (const VerifiedEntry& entry : audit.document.entries) {
    if (entry.session_id.empty()) {
      wave_entry = &entry;
    } else {
      records[entry.session_id].push_back(&entry);
    }
  }
  std::vector<Bytes> subject;
  if (by_session) {
    if (audit.sessions.size() != 1 || !audit.waves.empty()) {
      return FailedPreconditionError("evidence: a session's certificate holds the records of one session");
    }
    subject.push_back(audit.sessions[0].session_id);
  } else {
    if (audit.waves.size() != 1 || wave_entry == nullptr) {
      return FailedPreconditionError("evidence: a wave's certificate holds one wave verdict");
    }
    subject = audit.waves[0].member_sessions;
    if (audit.sessions.size() != subject.size()) {
      return FailedPreconditionError("evidence: it holds the records of " + std::to_string(audit.sessions.size()) +
                                     " sessions, its wave verdict lists " + std::to_string(subject.size()));
    }
  }

  // Each session's summary, node key and inventory.
  WP_ASSIGN_OR_RETURN(std::vector<NodeKey> listed_keys, ExportedNodeKeys(evidence));
  WP_ASSIGN_OR_RETURN(std::vector<LedgerDocument> carried, ExportedDocuments(evidence));
  Json sessions = Json::array();
  LedgerExportOptions regenerate;
  ExportParts parts;
  for (const Bytes& id : subject) {
    WP_ASSIGN_OR_RETURN(Json session, CertificateSessionJson(records[id]));
    WP_ASSIGN_OR_RETURN(NodeKey key, OrderedNodeKey(session, listed_keys));
    regenerate.node_keys.push_back(std::move(key));
    const Json& digest = session.at("declarations").at("inventory_digest");
    if (!digest.is_null()) {
      const auto same = [&](const LedgerDocument& d) { return Hex(proto::AsView(d.digest)) == digest; };
      if (std::none_of(parts.documents.begin(), parts.documents.end(), same)) {
        auto it = std::find_if(carried.begin(), carried.end(), same);
        if (it == carried.end()) {
          return FailedPreconditionError("evidence: no inventory " + digest.get<std::string>());
        }
        parts.documents.push_back({"inventory", it->digest, it->body, 0});
      }
    }
    sessions.push_back(std::move(session));
  }

  // The evidence again, from what verified: every entry with its envelope, the pinned keys.
  const Json& entries = evidence.at("entries");
  for (size_t i = 0; i < audit.document.entries.size(); ++i) {
    const VerifiedEntry& entry = audit.document.entries[i];
    auto envelope = HexDecode(entries.at(i).at("envelope").get<std::string>());
    if (!envelope.ok() || LedgerEntryDigest(proto::AsView(*envelope)) != entry.entry_digest) {
      return InternalError("evidence entry " + std::to_string(i) + " is not the entry verified");
    }
    parts.entries.push_back({entry, std::move(envelope).value()});
  }
  parts.head = audit.document.head;
  regenerate.authority_key = trust.authority;
  Json subject_json;
  Json outcome;
  Json wave = nullptr;
  Certificate certificate;
  if (by_session) {
    regenerate.session_id = subject[0];
    subject_json = {{"kind", "session"}, {"session_id", HexEncode(subject[0])}};
    const Json& o = sessions[0].at("outcome");
    certificate.pass = o.at("pass").get<bool>();
    certificate.result = certificate.pass ? "pass" : "fail (" + o.at("failure_reason").get<std::string>() + ")";
    certificate.subject = "session " + HexEncode(subject[0]);
  } else {
    regenerate.wave = WaveEntryFilter{wave_entry->sequence, subject};
    WP_ASSIGN_OR_RETURN(wave, CertificateWaveJson(*wave_entry));
    const std::string name = wave.at("name").get<std::string>();
    subject_json = {{"kind", "wave"}, {"wave", name}, {"wave_verdict_entry", wave_entry->sequence}};
    certificate.pass = wave.at("pass").get<bool>();
    certificate.result = WaveResult(certificate.pass, sessions);
    certificate.subject = "wave " + name + " (ledger entry " + std::to_string(wave_entry->sequence) + ")";
  }
  outcome = {{"pass", certificate.pass}, {"result", certificate.result}};
  Json document;
  document["format"] = kCertificateFormat;
  document["certified"] = {{"subject", std::move(subject_json)},
                           {"outcome", std::move(outcome)},
                           {"sessions", std::move(sessions)},
                           {"wave", std::move(wave)}};
  document["evidence"] = ExportDocumentJson(parts, trust.challenger, regenerate, std::nullopt);
  // Sorted, and any text that is not UTF-8 made U+FFFD, as the canonical text writes it.
  const nlohmann::json sorted =
      nlohmann::json::parse(document.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  certificate.text = CanonicalJsonText(sorted);
  certificate.document = std::move(document);
  certificate.audit = std::move(audit);
  return certificate;
}

StatusOr<Certificate> WriteCertificate(const Ledger& ledger, const CertificateRequest& request,
                                       const CertificateTrust& trust) {
  if (request.wave.empty() && !request.session_id.has_value()) {
    return InvalidArgumentError("certificate: of a session or of a wave");
  }
  LedgerExportOptions options;
  options.authority_key = trust.authority;
  options.node_keys = request.node_keys;
  // The inventories the ledger records name their nodes' keys too.
  WP_ASSIGN_OR_RETURN(std::vector<LedgerDocument> documents, ledger.Documents());
  for (const LedgerDocument& d : documents) {
    if (d.kind != "inventory" || !trust.read_inventory) continue;
    auto inventory = trust.read_inventory(d.body, "the inventory " + Hex(proto::AsView(d.digest)) + " of the ledger");
    if (!inventory.ok()) continue;  // an order naming it fails its audit, saying why
    for (const auto& [name, node] : inventory->nodes) options.node_keys.push_back({name, node.public_key});
  }
  if (request.wave.empty()) {
    options.session_id = request.session_id;
  } else {
    WP_ASSIGN_OR_RETURN(options.wave, FindWave(ledger, trust.challenger, request.wave, request.session_id));
  }
  WP_ASSIGN_OR_RETURN(Json evidence, ExportLedgerJson(ledger, trust.challenger, options, SystemClock()));
  if (options.session_id.has_value() && evidence.at("entries").empty()) {
    return NotFoundError("ledger " + ledger.path() + " holds no record of session " + HexEncode(*options.session_id));
  }
  return CertifyEvidence(evidence, trust);
}

StatusOr<Certificate> VerifyCertificate(const std::string& text, const CertificateTrust& trust) {
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) {
    return DataLossError("certificate: not in canonical form (docs/certificate.md): it begins with a byte-order mark "
                         "(U+FEFF, as some editors save UTF-8); a certificate is its canonical text, without one");
  }
  auto parsed = ParseJsonText(text, "certificate");
  if (!parsed.ok()) return DataLossError(parsed.status().message());
  // What the document is, before how it is written: another kind of document is named as such.
  const bool has_format = parsed->is_object() && parsed->contains("format") && parsed->at("format").is_string();
  if (!has_format) {
    return DataLossError(std::string("certificate: not a certificate: it has no field 'format' (a certificate's is ") +
                         kCertificateFormat + ")");
  }
  if (std::string format = parsed->at("format").get<std::string>(); format != kCertificateFormat) {
    if (format.size() > 64) format = format.substr(0, 64) + "...";
    return DataLossError("certificate: not a certificate: its format is '" + format + "', not " +
                         kCertificateFormat +
                         (format == kLedgerExportFormat ? " (a ledger export: audit it with --export)" : ""));
  }
  const std::string canonical = CanonicalJsonText(*parsed);
  if (canonical != text) {
    return DataLossError("certificate: not in canonical form (docs/certificate.md), first at " +
                         FirstTextDifference(text, canonical));
  }
  if (!parsed->contains("evidence") || !parsed->at("evidence").is_object()) {
    return DataLossError("certificate: no field 'evidence' (an object)");
  }
  const Json evidence = Json::parse(parsed->at("evidence").dump());
  WP_ASSIGN_OR_RETURN(Certificate certificate, CertifyEvidence(evidence, trust));
  if (certificate.text != text) {
    return DataLossError("certificate: " + FirstJsonDifference(*parsed, nlohmann::json::parse(certificate.text)) +
                         " (from its evidence, the signed records)");
  }
  return certificate;
}

}  // namespace wipeproof

#include "challenger/cli/cli_ledger_audit.h"

#include <cstdio>

#include "challenger/audit/ledger_audit.h"
#include "challenger/fleet/inventory.h"
#include "challenger/ledger/ledger_records.h"
#include "challenger/ledger/ledger_sessions.h"
#include "challenger/ledger/wipe_schema.h"
#include "common/cli_exit_codes.h"
#include "common/hex.h"
#include "common/terminal_text.h"

namespace wipeproof {
namespace {

using Json = nlohmann::ordered_json;

// Exit codes: common/cli_exit_codes.h.
constexpr char kProgram[] = "wipeproof-challenger ledger audit";

std::string KeyId(const proto::PublicKey& key) { return proto::KeyIdHex(proto::KeyIdOf(key)); }

// JSON strings must be UTF-8; texts from records (a node name, a statement) may not be.
std::string Utf8(const std::string& text) {
  return Json::parse(Json(text).dump(-1, ' ', false, Json::error_handler_t::replace)).get<std::string>();
}

std::string TranscriptColumn(const SessionAudit& s) {
  if (s.transcript_checked) return "matches";
  return s.outcome == "pass" && !s.status.ok() ? "-" : "n/a";
}

void PrintTable(const LedgerAudit& audit, const AuditCommand& command, std::ostream& out) {
  const ExportVerification& doc = audit.document;
  out << command.source << ": OK: " << doc.head.entry_count << " entries";
  if (doc.head.entry_count > 0) {
    out << "; head entry " << doc.head.sequence << " recorded " << FormatUnixMicrosUtc(doc.head.recorded_at_unix_us)
        << ", digest " << HexEncode(doc.head.digest.data(), doc.head.digest.size());
  }
  out << (doc.whole_chain ? "; whole chain verified up to the signed head"
                          : "; session filter: each entry verified on its own, the chain not (a left-out record "
                            "cannot be noticed)")
      << "\n";
  out << "schema: proto/wipe.capnp sha256 " << audit.schema_sha256 << " (this build's)\n";
  out << "trust: authority key " << KeyId(command.authority) << " and challenger key " << KeyId(command.challenger)
      << " as pinned; node keys recorded in the audited sources: " << audit.node_keys << "\n";
  char line[256];
  std::snprintf(line, sizeof(line), " %-32s  %-14s  %-20s  %6s  %8s  %-10s  %s\n", "SESSION", "NODE", "VERDICT",
                "ROUNDS", "LABELS", "TRANSCRIPT", "RESULT");
  out << line;
  for (const SessionAudit& s : audit.sessions) {
    std::snprintf(line, sizeof(line), " %-32s  %-14s  %-20s  %6u  %8llu  %-10s  %s\n", HexEncode(s.session_id).c_str(),
                  TerminalSafe(s.node_name).c_str(), s.outcome.c_str(), s.rounds,
                  static_cast<unsigned long long>(s.labels_recomputed), TranscriptColumn(s).c_str(),
                  s.status.ok() ? "OK" : "FAILED");
    out << line;
    if (!s.statement.empty()) out << "   statement: " << TerminalSafe(s.statement) << "\n";
    if (!s.failure_confirmation.empty()) out << "   failure: " << TerminalSafe(s.failure_confirmation) << "\n";
    if (!s.status.ok()) out << "   FAILED: " << TerminalSafe(s.status.ToString()) << "\n";
  }
  for (const WaveAudit& w : audit.waves) {
    out << " wave " << TerminalSafe(w.wave) << " (ledger entry " << w.sequence << "): " << (w.pass ? "pass" : "fail")
        << ", " << w.members << " member session(s)  " << (w.status.ok() ? "OK" : "FAILED") << "\n";
    if (!w.clock.empty()) {
      out << "   proof rounds after every member's fill: checked on the " << w.clock
          << (w.clock == kWaveClockName
                  ? ", agreeing with the wall clock within " + std::to_string(kWaveSendToleranceUs) +
                        " us (orderSentAfterWaveUs within " + std::to_string(kWaveClockToleranceUs) +
                        " us; orderSentAtUnixUs within " + std::to_string(kWaveSendToleranceUs) +
                        " us + 0.1% of the fill)"
                  : " (orderSentAtUnixUs: the wave verdict predates orderSentAfterWaveUs), within " +
                        std::to_string(kWaveSendToleranceUs) + " us + 0.1% of the fill")
          << "\n";
    }
    if (!w.fill_end_lag_us.empty() || !w.no_fill_time.empty()) {
      out << "   fill ends stated by the challenger minus those the nodes signed (reported, not checked: the "
             "order states no clock-skew allowance):";
      for (size_t i = 0; i < w.fill_end_lag_us.size(); ++i) {
        out << (i == 0 ? " " : ", ") << TerminalSafe(w.fill_end_lag_us[i].first) << " " << w.fill_end_lag_us[i].second
            << " us";
      }
      if (w.fill_end_spread_us.has_value()) {
        out << "; spread " << *w.fill_end_spread_us << " us on the " << w.fill_end_spread_clock;
      }
      for (size_t i = 0; i < w.no_fill_time.size(); ++i) {
        out << (i > 0                       ? ", "
                : w.fill_end_lag_us.empty() ? " no fill time stated: "
                                            : "; no fill time stated: ")
            << TerminalSafe(w.no_fill_time[i]);
      }
      out << "\n";
    }
    if (!w.statement.empty()) out << "   statement: " << TerminalSafe(w.statement) << "\n";
    if (!w.status.ok()) out << "   FAILED: " << TerminalSafe(w.status.ToString()) << "\n";
  }
  if (audit.first_failure.ok()) {
    uint64_t labels = 0;
    for (const SessionAudit& s : audit.sessions) labels += s.labels_recomputed;
    out << "audit: OK: " << audit.sessions.size() << " session(s) and " << audit.waves.size()
        << " wave verdict(s): every signature, the ledger chain, " << labels
        << " answered labels recomputed from the seed, every deadline, the node-signed transcripts, the verdicts "
           "and their bounds, the receipts\n";
  } else {
    out << "audit: FAILED: " << TerminalSafe(audit.first_failure.ToString()) << "\n";
  }
}

Json AuditJson(const LedgerAudit& audit, const AuditCommand& command) {
  const ExportVerification& doc = audit.document;
  Json out;
  out["result"] = audit.first_failure.ok() ? "ok" : "failed";
  out["first_failure"] = audit.first_failure.ok() ? Json(nullptr) : Json(Utf8(audit.first_failure.ToString()));
  out["export"] = {
      {"source", command.source},           {"entries", doc.head.entry_count},
      {"head_sequence", doc.head.sequence}, {"head_digest", HexEncode(doc.head.digest.data(), doc.head.digest.size())},
      {"whole_chain", doc.whole_chain},     {"schema_sha256", audit.schema_sha256}};
  out["trust"] = {{"authority_key_id", KeyId(command.authority)},
                  {"challenger_key_id", KeyId(command.challenger)},
                  {"authority_key_in_export", audit.export_lists_authority_key},
                  {"node_keys_in_export", audit.node_keys}};
  Json sessions = Json::array();
  for (const SessionAudit& s : audit.sessions) {
    sessions.push_back({{"session_id", HexEncode(s.session_id)},
                        {"node", Utf8(s.node_name)},
                        {"outcome", s.outcome},
                        {"bound_stated", s.bound_stated},
                        {"statement", Utf8(s.statement)},
                        {"records", s.records},
                        {"rounds", s.rounds},
                        {"labels_recomputed", s.labels_recomputed},
                        {"transcript_checked", s.transcript_checked},
                        {"failure_confirmation", s.failure_confirmation},
                        {"result", s.status.ok() ? "ok" : "failed"},
                        {"failure", s.status.ok() ? Json(nullptr) : Json(Utf8(s.status.ToString()))}});
  }
  out["sessions"] = std::move(sessions);
  Json waves = Json::array();
  for (const WaveAudit& w : audit.waves) {
    Json lags = Json::object();
    for (const auto& [node, lag] : w.fill_end_lag_us) lags[Utf8(node)] = lag;
    Json no_fill_time = Json::array();
    for (const std::string& node : w.no_fill_time) no_fill_time.push_back(Utf8(node));
    waves.push_back({{"sequence", w.sequence},
                     {"wave", Utf8(w.wave)},
                     {"pass", w.pass},
                     {"bound_stated", w.bound_stated},
                     {"statement", Utf8(w.statement)},
                     {"members", w.members},
                     {"placed_on", w.clock.empty() ? Json(nullptr) : Json(w.clock)},
                     {"fill_end_lag_us", lags},
                     {"fill_end_spread_us", w.fill_end_spread_us ? Json(*w.fill_end_spread_us) : Json(nullptr)},
                     {"fill_end_spread_on", w.fill_end_spread_us ? Json(w.fill_end_spread_clock) : Json(nullptr)},
                     {"no_fill_time", std::move(no_fill_time)},
                     {"result", w.status.ok() ? "ok" : "failed"},
                     {"failure", w.status.ok() ? Json(nullptr) : Json(Utf8(w.status.ToString()))}});
  }
  out["waves"] = std::move(waves);
  return out;
}

// One source's audit: prints its table (or, with `json` set, fills *json instead of printing) and
// returns its exit code; *audited gets the audit when the document could be audited.
int AuditOne(const Json& document, const AuditCommand& command, std::ostream& out, std::ostream& err, Json* json,
             std::optional<LedgerAudit>* audited) {
  LedgerAuditOptions options;
  options.session_id = command.session;
  options.session.threads = command.threads;
  options.read_inventory = ReadSignedInventory;
  auto audit = AuditLedgerExport(document, command.authority, command.challenger, options);
  if (!audit.ok()) {
    err << kProgram << ": " << (json != nullptr ? command.source + ": " : "") << Utf8(CliErrorText(audit.status()))
        << "\n";
    // No conclusion either way (exit 3): entries without envelopes, or an export written under
    // another schema than this build decodes (a build of that schema can audit it). A pinned key
    // the export does not match stays 1: the pinned keys are the auditor's anchors.
    const bool other_schema = document.is_object() && document.contains("schema_sha256") &&
                              document.at("schema_sha256").is_string() &&
                              document.at("schema_sha256").get<std::string>() != kWipeSchemaSha256;
    const bool unverified = other_schema || (audit.status().code() == StatusCode::kFailedPrecondition &&
                                             audit.status().message().rfind(kExportWithoutRecords, 0) == 0);
    if (json != nullptr) {
      *json = {{"result", unverified ? "unverified" : "failed"},
               {"first_failure", Utf8(CliErrorText(audit.status()))},
               {"export", {{"source", command.source}}}};
    } else if (unverified) {
      out << command.source << ": UNVERIFIED: " << audit.status().message() << "\n";
    }
    return unverified ? kExitIncomplete : kExitFailed;
  }
  if (json != nullptr) {
    *json = AuditJson(*audit, command);
  } else if (command.json) {
    out << AuditJson(*audit, command).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    PrintTable(*audit, command, out);
  }
  const int code = audit->first_failure.ok() ? kExitOk : kExitFailed;
  if (code != kExitOk) err << kProgram << ": " << Utf8(CliErrorText(audit->first_failure)) << "\n";
  *audited = std::move(audit).value();
  return code;
}

// The worse of two exit codes: a failure over an unverified document over OK.
int Worse(int a, int b) {
  if (a == kExitFailed || b == kExitFailed) return kExitFailed;
  return a == kExitIncomplete || b == kExitIncomplete ? kExitIncomplete : kExitOk;
}

}  // namespace

int RunLedgerAudit(const Json& document, const AuditCommand& command, std::ostream& out, std::ostream& err) {
  std::optional<LedgerAudit> audited;
  return AuditOne(document, command, out, err, nullptr, &audited);
}

int RunLedgerAudits(const std::vector<std::string>& sources,
                    const std::function<StatusOr<nlohmann::ordered_json>(size_t)>& load, const AuditCommand& command,
                    std::ostream& out, std::ostream& err) {
  int code = kExitOk;
  size_t ok = 0, sessions = 0, waves = 0;
  Json each = Json::array();
  std::vector<std::pair<std::string, std::vector<proto::Bytes>>> ids;
  for (size_t i = 0; i < sources.size(); ++i) {
    AuditCommand one = command;
    one.source = sources[i];
    Json json;
    std::optional<LedgerAudit> audited;
    int result;
    auto document = load(i);  // one document in memory at a time
    if (!document.ok()) {
      err << kProgram << ": " << sources[i] << ": " << Utf8(CliErrorText(document.status())) << "\n";
      json = {{"result", "failed"},
              {"first_failure", Utf8(CliErrorText(document.status()))},
              {"export", {{"source", sources[i]}}}};
      if (!command.json) out << sources[i] << ": FAILED: " << Utf8(CliErrorText(document.status())) << "\n";
      result = kExitFailed;
    } else {
      result = AuditOne(*document, one, out, err, command.json ? &json : nullptr, &audited);
    }
    code = Worse(code, result);
    if (result == kExitOk) ++ok;
    if (command.json) each.push_back(std::move(json));
    if (audited) {
      sessions += audited->sessions.size();
      waves += audited->waves.size();
      std::vector<proto::Bytes> mine;
      for (const SessionAudit& s : audited->sessions) mine.push_back(s.session_id);
      ids.push_back({sources[i], std::move(mine)});
    }
  }
  const std::vector<SessionInSeveralLedgers> copies = FindSessionsInSeveralLedgers(ids);
  if (!copies.empty()) code = kExitFailed;
  for (const SessionInSeveralLedgers& copy : copies) {
    err << kProgram << ": " << DescribeSessionInSeveralLedgers(copy) << "\n";
  }
  const std::string verdict = code == kExitOk ? "ok" : (code == kExitIncomplete ? "unverified" : "failed");
  if (command.json) {
    Json copied = Json::array();
    for (const SessionInSeveralLedgers& copy : copies) {
      copied.push_back({{"session_id", HexEncode(copy.session_id)}, {"sources", copy.ledgers}});
    }
    Json document = {
        {"result", verdict},
        {"sources", std::move(each)},
        {"sessions_in_several_sources", std::move(copied)},
        {"total", {{"sources", sources.size()}, {"sources_ok", ok}, {"sessions", sessions}, {"waves", waves}}}};
    out << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return code;
  }
  for (const SessionInSeveralLedgers& copy : copies) out << "FAILED: " << DescribeSessionInSeveralLedgers(copy) << "\n";
  out << "total: " << (code == kExitOk ? "OK" : (code == kExitIncomplete ? "UNVERIFIED" : "FAILED")) << ": "
      << sources.size() << " sources, " << ok << " audited OK; " << sessions << " session(s) and " << waves
      << " wave verdict(s); "
      << (copies.empty() ? std::string("no session in two sources")
                         : std::to_string(copies.size()) + " session(s) in two or more sources")
      << "\n";
  return code;
}

}  // namespace wipeproof

// `wipeproof-challenger ledger audit`: runs the audit of an export document
// (challenger/audit/ledger_audit.h, with the verdict's bound rechecked by
// challenger/audit/verdict_recheck.h) and prints it: a table of sessions, or JSON with --json.
// cli_ledger.h parses the command line and reads the files.
//
// Table (stdout):
//   export FILE: OK: 12 entries; head entry 11 ...; whole chain verified up to the signed head
//   schema: proto/wipe.capnp sha256 <hex> (this build's)
//   trust: authority key <id> and challenger key <id> as pinned; node keys recorded in the audited sources: 1
//    SESSION                           NODE          VERDICT             ROUNDS  LABELS  TRANSCRIPT  RESULT
//    <32 hex>                          demo-node     pass                    16    1024  matches     OK
//      statement: no bound: parameters not calibrated (profile ...)
//   audit: OK: 1 session(s) ...          or   audit: FAILED: <the first failure>
// JSON (--json, stdout): {"result": "ok"|"failed", "first_failure": null|text, "export": {...},
//   "trust": {...}, "sessions": [{"session_id", "node", "outcome", "bound_stated", "statement",
//   "records", "rounds", "labels_recomputed", "transcript_checked", "failure_confirmation",
//   "result", "failure"}]}.
// Exit codes (common/cli_exit_codes.h): 0 every session audited OK; 1 a check failed (the first
// failure named on stderr: "wipeproof-challenger ledger audit: session ...: ..."), or the document
// cannot be audited under the pinned keys; 3 an export without envelopes (UNVERIFIED: nothing in it
// can be audited), or written under another schema than this build decodes (no conclusion: a build
// of that schema can audit it).
//
// Several sources (the ledgers of a challenger StatefulSet's replicas, or their exports):
// RunLedgerAudits audits each on its own, as above, one after another (the table of each, then
//   FAILED: session <hex> is recorded in ledger A and ledger B: ... (copied or replayed?)
//   total: OK: 3 sources, 3 audited OK; 12 session(s) and 4 wave verdict(s); no session in two sources
// or with --json one document {"result", "sources": [each source's JSON as above, or {"result",
// "first_failure", "export": {"source"}} for one that could not be audited],
// "sessions_in_several_sources": [{"session_id", "sources"}], "total": {"sources", "sources_ok",
// "sessions", "waves"}}), and checks that no session appears in two of them. Exit code: 1 when a
// source fails or a session is in two sources, else 3 when a source is unverified, else 0.
//
// Thread-safety: runs on the calling thread (label recomputation on `threads`).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

struct AuditCommand {
  std::string source;  // what the document is, for the output: "export FILE" or "ledger FILE"
  proto::PublicKey authority{};
  proto::PublicKey challenger{};
  std::optional<proto::Bytes> session;  // audit only this session
  int threads = 0;                      // label recomputation; 0 = all cores
  bool json = false;
};

// Audits `document` and prints the result; returns the exit code above.
int RunLedgerAudit(const nlohmann::ordered_json& document, const AuditCommand& command, std::ostream& out,
                   std::ostream& err);

// Audits every source (`sources[i]` names it: "ledger FILE" or "export FILE"; `load(i)` reads its
// document, one at a time; command.source is ignored) and prints as above; returns the exit code.
int RunLedgerAudits(const std::vector<std::string>& sources,
                    const std::function<StatusOr<nlohmann::ordered_json>(size_t)>& load, const AuditCommand& command,
                    std::ostream& out, std::ostream& err);

}  // namespace wipeproof

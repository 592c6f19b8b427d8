// A certificate (`ledger certificate`, docs/certificate.md): one self-contained JSON document per
// session or per wave that other systems check offline, with the pinned authority and challenger
// keys and nothing else: what the session or wave was (node(s), devices, times), its outcome, its
// statements (bound, occupancy, any further the verdict makes) and assumptions, and the signed
// records they rest on.
//
// Document (format kCertificateFormat, in canonical form: certificate_text.h):
//   {"format": "wipeproof-certificate/v1",
//    "certified": {   -- what the records say (written first: keys sort, and "evidence" is long)
//      "subject": {"kind": "session", "session_id"} | {"kind": "wave", "wave", "wave_verdict_entry"},
//      "outcome": {"pass", "result"},  -- "pass", "fail (<reason>)", a wave's "fail (<node>: <reason>, ...)"
//      "sessions": [certificate_summary.h session, ...],  -- a wave's in its verdict's order
//      "wave": null | certificate_summary.h wave},
//    "evidence": an export document (challenger/ledger/ledger_export.h) of the subject's entries only
//                (session_filter, or wave_filter for a wave: its wave verdict and member sessions),
//                every entry with its envelope, written without the fields nothing signs
//                (ExportDocumentJson without a stamp), with the authority key, exactly the node keys
//                of the subject's orders (in their order) and exactly the inventories their
//                delegations name}
//
// Verification (VerifyCertificate): the text must be the canonical text of what it parses to; the
// evidence must pass the ledger audit (ledger_audit.h: the signed head, every entry against its
// envelope and signature on its own, every session's records, labels recomputed, deadlines,
// transcripts, verdicts, bounds, occupancy, receipts; the wave verdict) under the pinned keys; and
// the whole certificate, evidence included, recomputed from what verified (CertifyEvidence: the
// summaries from the records, the evidence from the verified entries, the pinned keys, the node keys
// the orders name by key id and the inventories their delegations name by digest), must be exactly
// the text given. So a certificate with any byte changed fails. What it does not show: that its
// entries are the whole ledger (the head shows how long the ledger was; a left-out record of another
// session cannot be noticed), and the challenger's own clock and measurements, which only its key
// vouches for (docs/audit.md "What the auditor receives, and what they must trust").
//
// Thread-safety: pure functions apart from reading the ledger (its own locking); label
// recomputation runs on the trust's threads.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "challenger/audit/ledger_audit.h"
#include "challenger/ledger/ledger.h"
#include "challenger/ledger/ledger_export.h"
#include "common/status.h"
#include "proto/crypto.h"

namespace wipeproof {

inline constexpr char kCertificateFormat[] = "wipeproof-certificate/v1";

// The keys a certificate is written and checked under, and how the inventories it carries are read.
struct CertificateTrust {
  proto::PublicKey authority{};    // pinned
  proto::PublicKey challenger{};   // pinned
  InventoryReader read_inventory;  // challenger/fleet ReadSignedInventory (the CLI passes it)
  int threads = 0;                 // label recomputation; 0 = all cores
};

// A certificate and the audit of its evidence.
struct Certificate {
  std::string text;                 // canonical (certificate_text.h)
  nlohmann::ordered_json document;  // the same, parsed
  LedgerAudit audit;                // of its evidence
  std::string subject;              // "session <hex>" or "wave <name> (ledger entry N)"
  bool pass = false;                // outcome.pass
  std::string result;               // outcome.result
};

// Audits `evidence` (an export document filtered by session or wave) under `trust` and builds the
// certificate from what verified. Errors: as AuditLedgerExport; DATA_LOSS (with the audit's code
// where it has one) for a session or wave verdict that fails its audit; FAILED_PRECONDITION for
// evidence that is not filtered by one session or one wave, a session without a verdict, or an
// order whose node key the evidence does not list (by name and the order's key id).
StatusOr<Certificate> CertifyEvidence(const nlohmann::ordered_json& evidence, const CertificateTrust& trust);

// What to certify: a session, a wave's latest verdict, or (both given) the verdict of that wave that
// lists that session.
struct CertificateRequest {
  std::optional<proto::Bytes> session_id;  // 16 bytes
  std::string wave;                        // "" for a session's certificate
  // Candidate node keys (--inventory's); the keys of the inventories the ledger records are
  // candidates too. A node's key is the candidate whose name and key id its order names.
  std::vector<NodeKey> node_keys;
};

// The certificate of `request` from `ledger` (verified whole under trust.challenger first).
// Errors: as ExportLedgerJson; NOT_FOUND for a session or wave the ledger has no record of
// (naming the ledger's waves); FAILED_PRECONDITION for a session whose verdict says
// wave-complete held in a wave of several nodes (only its wave verdict bears that out: certify
// the wave), and as CertifyEvidence.
StatusOr<Certificate> WriteCertificate(const Ledger& ledger, const CertificateRequest& request,
                                       const CertificateTrust& trust);

// Checks a certificate's text (above). Errors: every way it fails is an error: DATA_LOSS (not
// JSON, not canonical, a field that is not what the evidence says), or as CertifyEvidence
// (PERMISSION_DENIED for evidence of other keys than the pinned ones; FAILED_PRECONDITION for
// evidence written under another schema).
StatusOr<Certificate> VerifyCertificate(const std::string& text, const CertificateTrust& trust);

}  // namespace wipeproof

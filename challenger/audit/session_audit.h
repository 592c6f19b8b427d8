// One session re-verified from its ledger records alone (`ledger audit`, ledger_audit.h): nothing
// the challenger states is taken on its word where a record lets it be recomputed.
//
// Trust. The auditor pins the authority key and the challenger key. A node key is used only where
// the delegated order names its key id (WipeOrder.nodeKeyId: the first 8 bytes of its
// BLAKE2b-256), so a node key handed over with the export cannot stand in for another node's.
//
// Checks, in this order; the first that fails ends the session's audit and is named with the
// ledger entry it concerns ("session S: round 3 (ledger entry 7): ..."):
//   records    one order, first; at most one fill report and transcript; round logs that continue
//              one another (RoundLog.firstRound); at most two verdicts (a pass superseded by a
//              failure); one receipt, last; no record of a kind this auditor does not check
//   order      signed by the pinned authority key; names the pinned challenger key
//              (challengerKeyId); its node key id is a key the export lists for that node
//   report     signed by that node key; session, orderDigest, nodeKeyId; its devices are the plan's.
//              A report that fails this is a fact of the session, not yet an audit failure: it
//              fails a pass and confirms a badSignature or protocolError failure
//   verdicts   signed by the pinned challenger key; only a failure may supersede a pass
//   rounds     every logged round: devices of the plan, each once, indices inside the device's
//              range; the answer's session, round and size; every answered label recomputed from
//              the order's seed (kernels/chunk_verifier.h) and compared; the round's timing row
//              (deadlineMet = elapsedUs <= roundDeadlineUs, allCorrect, labelsChecked) agrees
//   verdict    the final one: node, order and report digests, deadlines, profile, devices (plan,
//              bytes held, chunksChecked = N_d recomputed: the distinct chunks of each device in the
//              leading rounds that were right and in time) and round timings are what the records say
//   outcome    a pass needs: the report, every device holding its plan, the fill within the
//              order's and each device's fill deadline, at least one round, every device
//              challenged, every answer present and right, every round in time, and the node-signed
//              transcript digest recomputed through proto/transcript.h over the recorded order,
//              report and rounds, its round count and its verdict digest (the verdict sent in
//              finish). A failure's reason is confirmed from the records where they hold the facts
//              (wrongLabel: the label recomputed and the logged answer differ and are the ones the
//              verdict names; lateRound; lateFill; shortCapacity; a report that does not verify or
//              match); other reasons rest on the challenger's word and the result says so
//   bound      what the verdict states about its bound, recomputed from the plan and the recomputed
//              N_d by the verdict's own code (verdict_recheck.h)
//   receipt    signed by the challenger; pass, node, digests of order, report and final verdict,
//              that verdict's ledger sequence, and the transcript it embeds
// A session whose order has no verdict (a challenger killed mid-session) makes no statement: its
// outcome is "no verdict" (count it as a failed wipe) and its audit is OK.
//
// Units: microseconds for times, labels for indices, bytes for sizes.
// Thread-safety: AuditSession is a pure function (it runs label recomputation on `threads`).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "challenger/ledger/ledger_export.h"
#include "challenger/session/declared_node.h"
#include "challenger/ledger/ledger_verify.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// The keys and documents an audit uses: authority and challenger pinned by the auditor; node keys
// from the export (for orders whose delegation names no inventory); the signed inventories the
// export carries, read, by digest (each an error when it did not read). An order whose delegation
// names an inventory is checked against it (session/declared_node.h) and its node key is the
// inventory's.
struct AuditKeys {
  proto::PublicKey authority{};
  proto::PublicKey challenger{};
  std::vector<NodeKey> nodes;
  std::map<proto::Digest, StatusOr<SignedInventory>> inventories;
};

struct SessionAuditOptions {
  int threads = 0;  // label recomputation threads; 0 = all cores
};

// The audit of one session.
struct SessionAudit {
  proto::Bytes session_id;  // 16 bytes
  std::string node_name;    // from the order; "" when there is no verified order
  std::string outcome;      // the final verdict: "pass", "fail (wrongLabel)", ...; "no verdict"
  bool bound_stated = false;
  std::string statement;             // the final verdict's statement
  uint64_t records = 0;              // ledger entries of the session
  uint32_t rounds = 0;               // rounds in the round log
  uint64_t labels_recomputed = 0;    // answered labels recomputed from the seed and compared
  bool transcript_checked = false;   // the node-signed transcript digest was recomputed and matched
  std::string failure_confirmation;  // failed verdicts: how the records bear the reason out
  // For the ledger audit's wave check (ledger_audit.h): the final verdict says wave-complete held,
  // the members the signed inventory declares for the node's wave, whether the first verdict passed.
  bool claims_wave_complete = false;
  std::vector<std::string> declared_wave_members;
  bool first_verdict_pass = false;
  Status status;                     // OK: every check held; else the first that did not
};

// Audits one session from `entries`: every ledger entry of that session, in ledger order (already
// verified as ledger entries: challenger signature, chain). Never fails as a function: a failed
// check is SessionAudit::status (DATA_LOSS for facts that contradict each other or a signature that
// does not verify, FAILED_PRECONDITION for a record this auditor cannot check).
SessionAudit AuditSession(const std::vector<const VerifiedEntry*>& entries, const AuditKeys& keys,
                          const SessionAuditOptions& options);

}  // namespace wipeproof

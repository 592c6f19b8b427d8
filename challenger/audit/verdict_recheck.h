// The verdict's bound recomputed from a session's records, for `ledger audit`
// (challenger/audit/session_audit.h): the plan the delegated order describes
// (session_plan.h PlanFromOrder) and the checked-chunk counts the audit recomputed from the round log go through
// SummarizeVerdict (verdict.h), the very function that built the verdict, and what it says must be
// what the verdict states: deadlineRuleSatisfied, boundStated, every device's unwipedBoundBytes and
// confidence, totalUnwipedBoundBytes and the statement. Nothing of the arithmetic is repeated here,
// so a change to the bound (bound.h, verdict.h) is audited as it is stated.
//
// The occupancy statement (Verdict.occupancy) likewise: present exactly when SummarizeVerdict
// computes one from `occupancy`, with its rounds, detection, shortUs, stated flag and statement.
//
// The order's profile endorsement (authorityKeyId, documentDigest) counts only when it names the
// audited authority's key (RecomputedFacts::authority_key_id); otherwise no bound may be stated.
// The plan's declarations come from the signed inventory the delegation names (RecomputedFacts::
// declared, session/declared_node.h ApplyDeclarations); without one no bound may be stated.
//
// The assumptions: the verdict lists EvaluateAssumptions' names in its order, and claims no more
// than the signed declarations allow: each one it says held must hold when recomputed from them,
// the fill report's totals and, for wave-complete, a wave run in which every other member held (the
// wave audit checks the run; what the challenger saw of it no record holds). Without a signed
// inventory none may read held. Details are not compared (the egress window is the challenger's
// clock's).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "challenger/session/declared_node.h"
#include "challenger/session/verdict.h"
#include "common/status.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// What the audit recomputed from a session's records, for the verdict's own arithmetic.
struct RecomputedFacts {
  proto::WipeOrder::Reader order;        // verified under the challenger key, standing under its delegation
  proto::KeyId authority_key_id{};       // that key's id: the only key whose profile endorsement counts
  proto::Verdict::Reader verdict;        // the session's final verdict, verified
  std::vector<uint64_t> chunks_checked;  // per order device: N_d recomputed from the round log
  const NodeDeclarations* declared = nullptr;  // the signed inventory's, which the order restates; null: none named
  bool have_report = false;                    // the fill report verified and fits the order
  std::vector<uint64_t> device_total_bytes;    // per order device, the report's totalBytes
  // The occupancy window: its bounds are the verdict's (the challenger's clock), its rounds (K) the
  // round log's occupancy rounds sent inside it, answered right and in time (session_audit.h).
  OccupancyFacts occupancy;
  // The last proof round's answer after the order, from the round log (the compute statement's interval).
  uint64_t proof_rounds_end_after_order_us = 0;
};

// OK when the verdict states what SummarizeVerdict computes from `facts`; DATA_LOSS naming the
// first field that differs ("totalUnwipedBoundBytes is 123, recomputed 456").
Status RecheckVerdictBound(const RecomputedFacts& facts);

}  // namespace wipeproof

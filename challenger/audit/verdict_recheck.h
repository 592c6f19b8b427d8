// The verdict's bound recomputed from a session's records, for `ledger audit`
// (challenger/audit/session_audit.h): the plan the delegated order describes
// (session_plan.h PlanFromOrder) and the checked-chunk counts the audit recomputed from the round log go through
// SummarizeVerdict (verdict.h), the very function that built the verdict, and what it says must be
// what the verdict states: deadlineRuleSatisfied, boundStated, every device's unwipedBoundBytes and
// confidence, totalUnwipedBoundBytes and the statement. Nothing of the arithmetic is repeated here,
// so a change to the bound (bound.h, verdict.h) is audited as it is stated.
//
// The order's profile endorsement (authorityKeyId, documentDigest) counts only when it names the
// audited authority's key (RecomputedFacts::authority_key_id); otherwise no bound may be stated.
// Not rechecked: the assumptions (they depend on what the challenger knew of the wave, which no
// record holds).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

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
};

// OK when the verdict states what SummarizeVerdict computes from `facts`; DATA_LOSS naming the
// first field that differs ("totalUnwipedBoundBytes is 123, recomputed 456").
Status RecheckVerdictBound(const RecomputedFacts& facts);

}  // namespace wipeproof

// The verdict's bound recomputed from a session's records, for `ledger audit`
// (challenger/ledger/session_audit.h VerdictRecheck): the plan the authority-signed order
// describes and the checked-chunk counts the audit recomputed from the round log go through
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

#include "challenger/ledger/session_audit.h"
#include "challenger/session/session_plan.h"
#include "common/status.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

// The plan an order describes: node, devices (selector, model, capacity, reserve, range, q, fill
// deadline), deadlines and the parameter profile as far as the order carries it (the profile's
// rounds, q and fill-rate settings are not in it and stay 0). REQUIRES: a shape-valid order.
SessionPlan PlanFromOrder(proto::WipeOrder::Reader order);

// VerdictRecheck: OK when the verdict states what SummarizeVerdict computes from `facts`;
// DATA_LOSS naming the first field that differs ("totalUnwipedBoundBytes is 123, recomputed 456").
Status RecheckVerdictBound(const RecomputedFacts& facts);

}  // namespace wipeproof

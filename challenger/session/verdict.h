// Building the Verdict (wipe.capnp Verdict; design-brief.md "Protocol v1", step 4) from what a
// session observed. Pass iff no failure was recorded. The verdict carries its profile and whether
// the profile meets the deadline rule for its adversary class; it states a bound only when
//   pass && profile.calibrated && deadline rule satisfied
//        && round deadline >= kHonestRoundMargin * honest p99.9 (measured, > 0; deadline_rule.h),
// and its statement then reads, per device at the union-bound confidence and for all devices at c,
//   "at 99.5% confidence at most 1234 bytes of device host were not wiped; ...;
//    all devices together at 99% confidence: at most 5678 bytes were not wiped"
// otherwise one of (the first condition that failed, in this order)
//   "no bound: session failed (<reason>)"
//   "no bound: parameters not calibrated (profile default-uncalibrated)"
//   "no bound: deadline rule not met for class commodity-cpu (round deadline ... > recompute floor ...)"
//   "no bound: honest round time not measured (profile p has no honest_round_p999_us)"
//   "no bound: round deadline 400 us is not at least 1.2 x the honest p99.9 round time 350 us
//    (profile p): honest nodes would fail rounds"
// DeviceBound.unwipedBoundBytes and totalUnwipedBoundBytes are set only when the bound is stated
// (0 otherwise). Bound arithmetic: bound.h. Assumptions: assumptions.h.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "challenger/parameters/deadline_rule.h"
#include "challenger/session/assumptions.h"
#include "challenger/session/bound.h"
#include "challenger/session/failure.h"
#include "challenger/session/session_plan.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

struct RoundRecord {
  uint32_t round = 0;
  uint64_t elapsed_us = 0;      // send to receipt, challenger's monotonic clock
  uint32_t labels_checked = 0;  // labels compared (0 when the answer was unusable)
  bool deadline_met = false;
  bool all_correct = false;
};

// Writes `rounds` as wipe.capnp RoundTiming entries (the verdict's rounds and the ledger's round log).
void WriteRoundTimings(const std::vector<RoundRecord>& rounds, capnp::List<proto::RoundTiming>::Builder out);

// Everything the verdict is computed from.
struct VerdictFacts {
  const SessionPlan* plan = nullptr;
  SessionFailure failure;                // reason NONE: passed
  uint64_t fill_us = 0;                  // order sent to report received (or to the failure)
  std::vector<RoundRecord> rounds;       // every round run, in order
  std::vector<uint64_t> chunks_checked;  // per planned device: distinct chunks in correct rounds
  std::vector<uint64_t> bytes_held;      // per planned device, from the report (0 without one)
  AssumptionInputs assumptions;          // plan pointer may be left null; filled from `plan`
  proto::Digest order_digest{};
  std::optional<proto::Digest> report_digest;
  int64_t issued_at_unix_us = 0;
};

struct VerdictSummary {
  bool pass = false;
  DeadlineRuleResult rule;
  bool honest_margin_met = false;  // HonestMarginMet(deadline, honest p99.9, kHonestRoundMargin)
  bool bound_stated = false;
  BoundResult bound;  // meaningful when bound_stated
  std::string statement;
  std::vector<AssumptionResult> assumptions;
};

VerdictSummary SummarizeVerdict(const VerdictFacts& facts);

// Writes the Verdict message.
void WriteVerdict(const VerdictFacts& facts, const VerdictSummary& summary, proto::Verdict::Builder out);

// Canonical Verdict signed by `challenger`. Errors: from signing (a verdict over the size limit).
StatusOr<proto::SignedEnvelope> SignVerdict(const VerdictFacts& facts, const VerdictSummary& summary,
                                            const proto::KeyPair& challenger);

// "99%", "99.5%", "99.999%".
std::string FormatPercent(double fraction);

}  // namespace wipeproof

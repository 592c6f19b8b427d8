// Building the Verdict (wipe.capnp Verdict; design-brief.md "Protocol v1", step 4) from what a
// session observed. Pass iff no failure was recorded. The verdict carries its profile and whether
// the profile meets the deadline rule for its adversary class; it states a bound only when
//   pass && profile.calibrated
//        && the authority vouches for the profile (ProfileEndorsementProblem: signed by the
//           authority, unchanged since, its class name, t_min and safety those of the authority's
//           signed class file)
//        && the order's delegation names the inventory the plan came from (AssumptionInputs::
//           inventory_signed): the declared capacities and reserves the bound counts are the
//           authority's word
//        && safety factor >= kMinStatedSafetyFactor (1.5)
//        && deadline rule satisfied
//        && round deadline >= kHonestRoundMargin * honest p99.9 (measured, > 0; deadline_rule.h),
// and its statement is then the node-level bound (bound.h): the node's planned memory taken
// together, reserves counted in full, followed by the per-device figures labelled as diagnostics:
//   "at 99% confidence at most 5678 bytes of node n1's planned memory (devices host, GPU-0, taken
//    together) were not wiped: up to 1234 of its 4194304 planned bytes, plus all 1000 bytes of
//    allowed reserves and sub-chunk remainders. Per device (diagnostic only: it assumes no label
//    moved to another device, which a prover can do; at 99.5% each): host 2345 bytes, GPU-0 3456 bytes"
// otherwise one of (the first condition that failed, in this order)
//   "no bound: session failed (<reason>)"
//   "no bound: parameters not calibrated (profile default-uncalibrated)"
//   "no bound: profile p is not signed by the authority (the order names no authority signature of
//    its profile)": whatever the challenger's reason (a file's signature, a changed document, a
//    class), which is its own and goes in VerdictSummary::endorsement_problem, not the signed words
//   "no bound: the authority's delegation names no inventory (delegate --inventory): ..."
//   "no bound: safety factor 1.2 of class c is below 1.5"
//   "no bound: deadline rule not met for class commodity-cpu (round deadline ... > recompute floor ...)"
//   "no bound: honest round time not measured (profile p has no honest_round_p999_us)"
//   "no bound: round deadline 400 us is not at least 1.2 x the honest p99.9 round time 350 us
//    (profile p): honest nodes would fail rounds"
// DeviceBound.unwipedBoundBytes (diagnostic) and totalUnwipedBoundBytes (the node statement) are
// set only when the bound is stated (0 otherwise). Bound arithmetic: bound.h. Assumptions:
// assumptions.h.
//
// The wave statement (wipe.capnp WaveVerdict): SummarizeWaveBound, the same joint bound over the
// devices of every member, stated only for a complete wave whose members all passed and all state
// their own bound at the same confidence.
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
#include "challenger/session/compute_statement.h"
#include "challenger/session/failure.h"
#include "challenger/session/occupancy_bound.h"
#include "challenger/session/session_plan.h"
#include "proto/crypto.h"
#include "proto/signing.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {

struct RoundRecord {
  uint32_t round = 0;
  uint64_t elapsed_us = 0;           // send to receipt, challenger's monotonic clock
  uint64_t sent_after_order_us = 0;  // when it was sent, after the order (same clock; not in the ledger)
  bool proof = false;                // a proof round (every device at q_d) rather than a holding one
  uint32_t labels_checked = 0;       // labels compared (0 when the answer was unusable)
  bool deadline_met = false;
  bool all_correct = false;
  bool on_channel = false;  // sent on the round channel, not over RPC (RoundTiming.roundChannel)
};

// Writes `rounds` as wipe.capnp RoundTiming entries (the verdict's rounds and the ledger's round log).
void WriteRoundTimings(const std::vector<RoundRecord>& rounds, capnp::List<proto::RoundTiming>::Builder out);

// The occupancy window as the session ran it (occupancy_bound.h; Verdict.occupancy): `ran` once the
// proof rounds passed in a session whose order asked for a window.
struct OccupancyFacts {
  bool ran = false;
  uint64_t start_after_order_us = 0;  // the last proof round's answer, after the order (session clock)
  uint64_t end_after_order_us = 0;    // when the window ended (its length, or earlier: a failure, a used-up pool)
  uint32_t rounds = 0;                // occupancy rounds answered correctly and in time
  uint64_t unprotected_us = 0;        // U of occupancy_bound.h: the window less its gaps' running time
};

// Everything the verdict is computed from.
struct VerdictFacts {
  const SessionPlan* plan = nullptr;
  SessionFailure failure;                 // reason NONE: passed
  uint64_t fill_us = 0;                   // order sent to report received (or to the failure)
  std::vector<RoundRecord> rounds;        // every round run, in order
  std::vector<uint64_t> chunks_checked;   // per planned device: distinct chunks in correct rounds
  std::vector<uint64_t> bytes_held;       // per planned device, from the report (0 without one)
  std::vector<uint64_t> filled_after_us;  // per planned device: order sent to its fill notice (0: none)
  AssumptionInputs assumptions;           // plan pointer may be left null; filled from `plan`
  proto::Digest order_digest{};
  std::optional<proto::Digest> report_digest;
  int64_t issued_at_unix_us = 0;
  int64_t order_sent_unix_us = 0;  // wall clock when the order was sent (0: never sent)
  OccupancyFacts occupancy;
  // The last proof round's answer, after the order (the compute statement's interval; 0: none).
  uint64_t proof_rounds_end_after_order_us = 0;
};

// The answer of the last proof round among `rounds`, after the order; 0 when none was answered.
uint64_t ProofRoundsEndAfterOrderUs(const std::vector<RoundRecord>& rounds);

struct VerdictSummary {
  bool pass = false;
  DeadlineRuleResult rule;
  bool honest_margin_met = false;   // HonestMarginMet(deadline, honest p99.9, kHonestRoundMargin)
  std::string endorsement_problem;  // ProfileEndorsementProblem(profile): "" when the authority vouches
  bool safety_met = false;          // safety factor >= kMinStatedSafetyFactor
  bool bound_stated = false;
  BoundResult bound;  // meaningful when bound_stated: bound.node is the statement
  std::string statement;
  std::vector<AssumptionResult> assumptions;
  // The occupancy statement (occupancy_bound.h), when the order asked for a window and the proof
  // rounds passed (occupancy.ran). Stated only when the bound is and T* + U is below the length the
  // window ran (a window the challenger closed before its order's length says so in its words).
  bool occupancy_present = false;
  OccupancyStatement occupancy;
  bool occupancy_stated = false;
  std::string occupancy_statement;
  // The compute statement (compute_statement.h), in every verdict.
  ComputeStatement compute;
};

VerdictSummary SummarizeVerdict(const VerdictFacts& facts);

// Writes the Verdict message.
void WriteVerdict(const VerdictFacts& facts, const VerdictSummary& summary, proto::Verdict::Builder out);

// Canonical Verdict signed by `challenger`. Errors: from signing (a verdict over the size limit).
StatusOr<proto::SignedEnvelope> SignVerdict(const VerdictFacts& facts, const VerdictSummary& summary,
                                            const proto::KeyPair& challenger);

// "99%", "99.5%", "99.999%".
std::string FormatPercent(double fraction);

// One member of a wave, for the wave statement.
struct WaveMemberBound {
  std::string node;
  bool pass = false;
  bool bound_stated = false;
  double confidence = 0;
  std::vector<DeviceBoundInput> devices;  // capacity, planned bytes, distinct chunks checked
};

// A member as its signed verdict records it (Verdict.devices: capacityBytes, plannedBytes,
// chunksChecked; pass, boundStated, confidence). REQUIRES: a verdict this challenger signed.
WaveMemberBound WaveMemberFromVerdict(proto::Verdict::Reader verdict);

struct WaveBoundSummary {
  bool bound_stated = false;
  JointBound bound;  // meaningful when bound_stated
  double confidence = 0;
  std::string statement;
};

// The wave statement: stated only when `complete` (every node of the wave was in the run and the
// inventory declares the wave complete), at least one member, every member passed and states its own
// bound, all at one confidence; then the joint bound (bound.h) over every member's devices:
//   "at 99% confidence at most X bytes of wave rack-1's planned memory (2 nodes: a, b; 3 devices,
//    taken together) were not wiped: up to M of its P planned bytes, plus all R bytes of allowed
//    reserves and sub-chunk remainders"
// otherwise "no bound for wave rack-1: <the first reason>" (not complete; no members; node x failed;
// node x states no bound; members at different confidences).
WaveBoundSummary SummarizeWaveBound(const std::string& wave, const std::vector<WaveMemberBound>& members,
                                    bool complete);

}  // namespace wipeproof

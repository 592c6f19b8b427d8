// The measuring half of `wipeproof-challenger calibrate`: real sessions over the real path, timed on
// the challenger's monotonic clock, then the derivation of calibration_rule.h.
//
//   1. Round probe. One session under a probe profile: the node's whole declared memory (so lookups
//      hit memory as large as in a real wipe), a small m (probe_chunk_labels, default 2^8, so the
//      fill and the challenger's expected labels are cheap: a label's lookup does not depend on m),
//      q = the policy's labels per round on every device, probe_rounds rounds (default 2000, so
//      p99.9 rests on >= 2 samples above it), round deadline probe_round_deadline_us (default 60 s:
//      rounds are measured here, not judged). Every label is checked as in any session. Its round
//      times give the honest distribution; p99.9 picks the deadline and m (ChooseRoundRule).
//   2. Fill probe. A trial session at the chosen m with the derived R, labels per round and round
//      deadline, and a generous fill deadline (probe_fill_deadline_us). The challenger computes its
//      expected labels during the fill as in every session, so where it shares a machine with the
//      node (loopback) the fill is measured as slow as real sessions will see it. Its fill time,
//      order sent to report received, is the measured fill; its rounds are a first check of the new
//      deadline (a late one is a warning).
//   3. DeriveCalibratedProfile with the node's claims (if its signed profile was given) reduced at
//      the chosen m.
// A probe session that fails (other than a late round in the fill probe, reported as a warning)
// stops calibration: an honest node passes both.
//
// Sessions are run through a SessionDriver: over TCP in the CLI (wave_run.h RunTcpSession), over an
// in-memory pipe in tests. They are ordinary sessions: signed orders, verdicts (uncalibrated
// profiles, no bound), records in whatever RecordSink the driver uses.
//
// Thread-safety: RunCalibration runs on the calling thread; the driver decides where sessions run.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "challenger/calibration/calibration_rule.h"
#include "challenger/calibration/node_profile_claims.h"
#include "challenger/fleet/inventory.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/session_runner.h"
#include "common/clock.h"

namespace wipeproof {

using SessionDriver = std::function<StatusOr<SessionOutcome>(const SessionPlan& plan)>;

struct ProbeOptions {
  uint32_t probe_chunk_labels = 256;  // m of the round probe, a power of two
  uint32_t probe_rounds = 2000;       // rounds of the round probe
  // Generous: the probe measures rounds, it does not judge them (the session runner bounds a
  // round's real-time wait at deadline + max(1 s, deadline), so a stalled challenger still ends).
  uint64_t probe_round_deadline_us = 60'000'000;
  uint64_t probe_fill_deadline_us = 3'600'000'000;  // generous: the probe measures the fill
};

struct CalibrationRequest {
  const Inventory* inventory = nullptr;  // required
  std::string node;                      // inventory name
  std::string profile_name;              // "" = "<node>-<class>-m2^k"
  CalibrationPolicy policy;
  ProbeOptions probe;
  const NodeProfile* node_profile = nullptr;  // verified already; null = none
};

struct ProbeSummary {
  bool pass = false;
  std::string failure;  // SessionFailure::Describe(), when failed
  uint32_t chunk_labels = 0;
  uint32_t rounds_run = 0;
  uint64_t fill_us = 0;
  uint64_t prepare_us = 0;  // challenges and expected labels, before the order
};

struct CalibrationRun {
  ProbeSummary round_probe;
  std::vector<uint64_t> round_times_us;  // every round of the round probe, in order
  RoundTimeStats rounds;
  ProbeSummary fill_probe;
  std::vector<uint64_t> trial_round_times_us;  // the fill probe's rounds, under the new deadline
  NodeClaims claims;
  CalibrationResult result;
};

// Errors: INVALID_ARGUMENT (request, plan); UNAVAILABLE when a probe session could not run or
// failed (its failure text); FAILED_PRECONDITION when calibration refuses (calibration_rule.h).
// `progress` (may be null) receives one line per step, for stderr.
StatusOr<CalibrationRun> RunCalibration(const CalibrationRequest& request, const SessionDriver& drive,
                                        const Clock& clock, const std::function<void(const std::string&)>& progress);

}  // namespace wipeproof

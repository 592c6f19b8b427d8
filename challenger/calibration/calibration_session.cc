#include "challenger/calibration/calibration_session.h"

#include <algorithm>

#include "challenger/fleet/plan_builder.h"
#include "common/numbers.h"

namespace wipeproof {

namespace {

// An uncalibrated profile for a probe session: the verdict states no bound.
Profile ProbeProfile(const std::string& name, const CalibrationPolicy& policy, uint32_t m, uint32_t rounds,
                     uint32_t labels_per_round, uint64_t round_deadline_us, uint64_t fill_deadline_us) {
  Profile p = DefaultProfile();
  p.name = name;
  p.chunk_labels = m;
  p.format = policy.format;
  p.rounds = rounds;
  p.labels_per_round = labels_per_round;
  p.round_deadline_us = round_deadline_us;
  p.fill_deadline_us = fill_deadline_us;
  p.adversary = policy.adversary;
  p.confidence = policy.confidence;
  p.calibrated = false;
  p.order_ttl_us = policy.order_ttl_us;
  return p;
}

ProbeSummary Summarize(const SessionOutcome& o, uint32_t m) {
  ProbeSummary s;
  s.pass = o.pass;
  if (!o.pass) s.failure = o.failure.Describe();
  s.chunk_labels = m;
  s.rounds_run = static_cast<uint32_t>(o.rounds.size());
  s.fill_us = o.fill_us;
  s.prepare_us = o.prepare_us;
  return s;
}

}  // namespace

StatusOr<CalibrationRun> RunCalibration(const CalibrationRequest& request, const SessionDriver& drive,
                                        const Clock& clock, const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if (request.inventory == nullptr) return InvalidArgumentError("calibration: no inventory");
  const CalibrationPolicy& policy = request.policy;
  WP_RETURN_IF_ERROR(ValidatePolicy(policy));
  const ProbeOptions& probe = request.probe;
  if (!IsPowerOfTwo(probe.probe_chunk_labels) || probe.probe_chunk_labels > kMaxChunkLabels) {
    return InvalidArgumentError("probe m must be a power of two <= 2^20, got " +
                                std::to_string(probe.probe_chunk_labels));
  }
  if (probe.probe_rounds < 1) return InvalidArgumentError("probe rounds must be >= 1");
  const InventoryNode* node = request.inventory->FindNode(request.node);
  if (node == nullptr) return NotFoundError("node '" + request.node + "' is not in the inventory");
  const WaveContext wave = LoneSessionWaveContext(*request.inventory, request.node);
  CalibrationRun run;

  // 1. Round probe.
  const Profile round_profile =
      ProbeProfile("calibration-round-probe", policy, probe.probe_chunk_labels, probe.probe_rounds,
                   policy.labels_per_round, probe.probe_round_deadline_us, probe.probe_fill_deadline_us);
  WP_ASSIGN_OR_RETURN(SessionPlan round_plan, BuildPlan(*request.inventory, request.node, round_profile, wave, clock));
  say("round probe: " + std::to_string(probe.probe_rounds) + " rounds of " + std::to_string(policy.labels_per_round) +
      " labels per device at m = 2^" + std::to_string(FloorLog2(probe.probe_chunk_labels)) + " over " +
      round_plan.address);
  auto round_outcome = drive(round_plan);
  if (!round_outcome.ok()) return round_outcome.status().WithContext("round probe");
  run.round_probe = Summarize(*round_outcome, probe.probe_chunk_labels);
  if (!round_outcome->pass) {
    return UnavailableError("round probe failed: " + run.round_probe.failure +
                            " (an honest node passes it; calibration needs a working node)");
  }
  for (const RoundRecord& r : round_outcome->rounds) run.round_times_us.push_back(r.elapsed_us);
  run.rounds = SummarizeRoundTimes(run.round_times_us);
  say("round probe: p50 " + std::to_string(run.rounds.p50_us) + " us, p99 " + std::to_string(run.rounds.p99_us) +
      " us, p99.9 " + std::to_string(run.rounds.p999_us) + " us, max " + std::to_string(run.rounds.max_us) + " us");

  // 2. m from the rule (refuses here when none fits), then the fill probe: a trial session at that m
  //    with the derived R and labels per round, so the challenger computes its expected labels
  //    during the fill as in any session (on a machine it shares with the node, that slows the fill
  //    exactly as it will in real sessions), and its rounds run under the new deadline.
  WP_ASSIGN_OR_RETURN(RoundRule rule, ChooseRoundRule(run.rounds.p999_us, policy));
  const uint32_t m = rule.chunk_labels;
  CalibrationInputs in;
  in.rounds = run.rounds;
  for (const InventoryDevice& d : node->devices) {
    WP_ASSIGN_OR_RETURN(uint64_t reserve, request.inventory->ReserveFor(d.model));
    in.device_labels.push_back(PlannedLabelCount(d.capacity_bytes, reserve, 1));
    in.device_models.push_back(d.model);
  }
  in.profile_name = request.profile_name.empty()
                        ? request.node + "-" + policy.adversary.name + "-m2^" + std::to_string(FloorLog2(m))
                        : request.profile_name;
  in.measured_fill_us = 1;  // a placeholder: this derivation only shapes the trial (m, R, q)
  WP_ASSIGN_OR_RETURN(CalibrationResult shape, DeriveCalibratedProfile(in, policy));
  Profile fill_profile = shape.profile;
  fill_profile.name = "calibration-fill-probe";
  fill_profile.calibrated = false;
  fill_profile.honest_round_p999_us = 0;
  fill_profile.fill_deadline_us = probe.probe_fill_deadline_us;
  WP_ASSIGN_OR_RETURN(SessionPlan fill_plan, BuildPlan(*request.inventory, request.node, fill_profile, wave, clock));
  say("fill probe: m = 2^" + std::to_string(FloorLog2(m)) + ", R = " + std::to_string(fill_profile.rounds) +
      ", q = " + std::to_string(fill_profile.labels_per_round) + ", round deadline " +
      std::to_string(rule.round_deadline_us) + " us <= recompute floor " + std::to_string(rule.rule.floor_us) + " us");
  auto fill_outcome = drive(fill_plan);
  if (!fill_outcome.ok()) return fill_outcome.status().WithContext("fill probe");
  run.fill_probe = Summarize(*fill_outcome, m);
  for (const RoundRecord& r : fill_outcome->rounds) run.trial_round_times_us.push_back(r.elapsed_us);
  std::vector<std::string> probe_warnings;
  if (!fill_outcome->pass) {
    const bool only_late_round = fill_outcome->failure.reason == proto::FailureReason::LATE_ROUND;
    if (!only_late_round) {
      return UnavailableError("fill probe failed: " + run.fill_probe.failure +
                              " (an honest node passes it; calibration needs a working node)");
    }
    const SessionFailure& f = fill_outcome->failure;
    uint64_t answered_us = 0;
    for (const RoundRecord& r : fill_outcome->rounds) {
      if (f.has_round && r.round == f.round) answered_us = r.elapsed_us;
    }
    if (f.has_round && answered_us > 0 && answered_us <= rule.round_deadline_us) {
      // The answer was in time on the challenger's clock; the runner's real-time wait gave up first.
      probe_warnings.push_back("round " + std::to_string(f.round) + " of the fill probe was answered in " +
                               std::to_string(answered_us) +
                               " us, within the new deadline, but the session runner's real-time wait limit expired "
                               "first (" +
                               f.text + "): the challenger's machine stalled; rerun calibrate");
    } else {
      probe_warnings.push_back("a round of the fill probe missed the new deadline: " + run.fill_probe.failure +
                               " (rerun calibrate if it recurs; an honest session would fail the same way)");
    }
  }
  say("fill probe: fill " + std::to_string(run.fill_probe.fill_us) + " us (order sent to report received), " +
      std::to_string(run.fill_probe.rounds_run) + " rounds");

  // 3. Derive, with the measured fill and the node's claims at m.
  in.measured_fill_us = run.fill_probe.fill_us;
  if (request.node_profile != nullptr) {
    std::vector<PlannedDeviceRef> refs;
    for (const PlannedDevice& d : fill_plan.devices) refs.push_back({d.selector, d.planned_bytes(), d.capacity_bytes});
    run.claims = ClaimsFromNodeProfile(*request.node_profile, refs, policy.format, m);
    in.claims = run.claims;
  }
  in.calibrated_at_unix_us = clock.UnixMicros();
  WP_ASSIGN_OR_RETURN(run.result, DeriveCalibratedProfile(in, policy));
  // The first round of a session follows a long pause (the fill, the wait for expected labels);
  // on some machines it is much slower than the rest, and p99.9 over the probe does not see one
  // slow sample. A real session fails if it exceeds the deadline: say so.
  if (!run.round_times_us.empty() && run.round_times_us[0] > run.result.round.round_deadline_us) {
    probe_warnings.push_back("the round probe's first round took " + std::to_string(run.round_times_us[0]) +
                             " us, above the new deadline of " + std::to_string(run.result.round.round_deadline_us) +
                             " us (later rounds: p99.9 " + std::to_string(run.rounds.p999_us) +
                             " us): a session whose first round is as slow fails it (lateRound); check with a wipe "
                             "under the new profile");
  }
  run.result.warnings.insert(run.result.warnings.end(), probe_warnings.begin(), probe_warnings.end());
  return run;
}

}  // namespace wipeproof

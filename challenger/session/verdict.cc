#include "challenger/session/verdict.h"

#include <algorithm>
#include <cstdio>

#include "challenger/parameters/parameter_profile.h"

namespace wipeproof {

namespace {


std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// "up to M of its P planned bytes, plus all R bytes of allowed reserves and sub-chunk remainders"
std::string JointParts(const JointBound& b) {
  return "up to " + std::to_string(b.missing_bytes) + " of its " + std::to_string(b.planned_bytes) +
         " planned bytes, plus all " + std::to_string(b.outside_bytes) +
         " bytes of allowed reserves and sub-chunk remainders";
}

std::string BoundStatement(const SessionPlan& plan, const BoundResult& bound) {
  std::vector<std::string> selectors;
  for (const PlannedDevice& d : plan.devices) selectors.push_back(d.selector);
  std::string s = "at " + FormatPercent(plan.profile.confidence) + " confidence at most " +
                  std::to_string(bound.node.total_bytes) + " bytes of node " + plan.node_name +
                  "'s planned memory (devices " + JoinNames(selectors) +
                  ", taken together) were not wiped: " + JointParts(bound.node) +
                  ". Per device (diagnostic only: it assumes no label moved to another device, which a prover "
                  "can do; at " +
                  FormatPercent(bound.per_device_confidence) + " each): ";
  for (size_t i = 0; i < plan.devices.size(); ++i) {
    s += (i == 0 ? "" : ", ") + plan.devices[i].selector + " " + std::to_string(bound.device_bytes[i]) + " bytes";
  }
  return s;
}

std::string FormatFactor(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

// Microseconds as seconds, "12.5 s".
std::string FormatSeconds(uint64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.6g s", static_cast<double>(us) / 1e6);
  return buf;
}

// The occupancy statement of a session whose order asked for a window (verdict.h VerdictSummary).
void SummarizeOccupancy(const VerdictFacts& facts, VerdictSummary* v) {
  const SessionPlan& plan = *facts.plan;
  const OccupancyFacts& o = facts.occupancy;
  if (plan.occupancy_window_us == 0 || !o.ran) return;
  v->occupancy_present = true;
  std::vector<OccupancyDevice> devices;
  uint64_t outside = 0;
  for (const PlannedDevice& d : plan.devices) {
    devices.push_back({d.planned_bytes(), d.occupancy_labels});
    outside += d.capacity_bytes - d.planned_bytes();
  }
  const uint64_t length = o.end_after_order_us > o.start_after_order_us ? o.end_after_order_us - o.start_after_order_us : 0;
  v->occupancy = ComputeOccupancyStatement(devices, plan.occupancy_shortfall_bytes, plan.profile.confidence,
                                           std::max<uint64_t>(1, plan.occupancy_mean_gap_us), o.unprotected_us,
                                           length);
  const std::string none = "no occupancy statement: ";
  if (!v->pass) {
    v->occupancy_statement = none + "session failed (" + FailureReasonName(facts.failure.reason) + ")";
  } else if (!v->bound_stated) {
    v->occupancy_statement = none + "no bound is stated, and the occupancy statement needs the same conditions (" +
                             v->statement + ")";
  } else if (!v->occupancy.says_something) {
    v->occupancy_statement = none + "T* + U = " + FormatSeconds(v->occupancy.stated_short_us) +
                             " is not below the window's " + FormatSeconds(length) +
                             ": shorten the mean gap or ask more labels per round";
  } else {
    v->occupancy_stated = true;
    v->occupancy_statement =
        "at " + FormatPercent(plan.profile.confidence) + " confidence node " + plan.node_name +
        "'s planned memory lacked labels in more than " + std::to_string(outside + plan.occupancy_shortfall_bytes) +
        " bytes (b = " + std::to_string(plan.occupancy_shortfall_bytes) + " of its planned bytes plus all " +
        std::to_string(outside) + " bytes of allowed reserves and sub-chunk remainders) for at most " +
        FormatSeconds(v->occupancy.stated_short_us) + " of its " + FormatSeconds(length) + " occupancy window" +
        (length < plan.occupancy_window_us
             ? " (closed by the challenger before the " + FormatSeconds(plan.occupancy_window_us) +
                   " its order allowed: at its wave's next run, or with its pool of rounds used up)"
             : "") +
        " (" +
        std::to_string(o.rounds) + " occupancy rounds, all answered in time, at a mean gap of " +
        FormatSeconds(plan.occupancy_mean_gap_us) + ", each detecting such a shortfall with probability at least " +
        FormatFactor(v->occupancy.detection) + "; " + FormatSeconds(o.unprotected_us) +
        " of the window unprotected: rounds in flight and the challenger's own delays, counted in full)";
  }
}

}  // namespace

void WriteRoundTimings(const std::vector<RoundRecord>& rounds, capnp::List<proto::RoundTiming>::Builder out) {
  for (size_t i = 0; i < rounds.size(); ++i) {
    const RoundRecord& r = rounds[i];
    auto w = out[static_cast<unsigned>(i)];
    w.setRoundIndex(r.round);
    w.setElapsedUs(r.elapsed_us);
    w.setLabelsChecked(r.labels_checked);
    w.setDeadlineMet(r.deadline_met);
    w.setAllCorrect(r.all_correct);
    w.setSentAfterOrderUs(r.sent_after_order_us);
    w.setRoundChannel(r.on_channel);
  }
}

std::string FormatPercent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g%%", fraction * 100.0);
  return buf;
}

VerdictSummary SummarizeVerdict(const VerdictFacts& facts) {
  const SessionPlan& plan = *facts.plan;
  const Profile& profile = plan.profile;
  VerdictSummary v;
  v.pass = !facts.failure.failed();
  v.rule = CheckDeadlineRule(profile.chunk_labels, profile.format, profile.adversary.t_min_ps,
                             profile.adversary.safety_factor, profile.round_deadline_us, profile.adversary.name);
  v.honest_margin_met = HonestMarginMet(profile.round_deadline_us, profile.honest_round_p999_us, kHonestRoundMargin);
  v.endorsement_problem = ProfileEndorsementProblem(profile);
  v.safety_met = profile.adversary.safety_factor >= kMinStatedSafetyFactor;
  v.bound_stated = v.pass && profile.calibrated && v.endorsement_problem.empty() && facts.assumptions.inventory_signed &&
                   v.safety_met && v.rule.satisfied && v.honest_margin_met;
  if (v.bound_stated) {
    std::vector<DeviceBoundInput> inputs;
    for (size_t i = 0; i < plan.devices.size(); ++i) {
      inputs.push_back({plan.devices[i].capacity_bytes, plan.devices[i].planned_bytes(), facts.chunks_checked[i]});
    }
    v.bound = ComputeBound(inputs, profile.confidence);
    v.statement = BoundStatement(plan, v.bound);
  } else if (!v.pass) {
    v.statement = "no bound: session failed (" + FailureReasonName(facts.failure.reason) + ")";
  } else if (!profile.calibrated) {
    v.statement = "no bound: parameters not calibrated (profile " + profile.name + ")";
  } else if (!v.endorsement_problem.empty()) {
    // Signed words only from what the order shows, so both audits recompute them: whenever the
    // challenger finds a problem, its order names no authority signature (WriteProfile). Why (a
    // file's signature, a class) stays the challenger's own: endorsement_problem.
    v.statement = "no bound: profile " + profile.name +
                  " is not signed by the authority (the order names no authority signature of its profile)";
  } else if (!facts.assumptions.inventory_signed) {
    v.statement = "no bound: the authority's delegation names no inventory (delegate --inventory): the declared "
                  "capacities and reserves the bound counts are not the authority's word";
  } else if (!v.safety_met) {
    v.statement = "no bound: safety factor " + FormatFactor(profile.adversary.safety_factor) + " of class " +
                  profile.adversary.name + " is below " + FormatFactor(kMinStatedSafetyFactor);
  } else if (!v.rule.satisfied) {
    v.statement =
        "no bound: deadline rule not met for class " + profile.adversary.name + " (" + v.rule.explanation + ")";
  } else if (profile.honest_round_p999_us == 0) {
    v.statement = "no bound: honest round time not measured (profile " + profile.name + " has no honest_round_p999_us)";
  } else {
    v.statement = "no bound: round deadline " + std::to_string(profile.round_deadline_us) + " us is not at least " +
                  FormatFactor(kHonestRoundMargin) + " x the honest p99.9 round time " +
                  std::to_string(profile.honest_round_p999_us) + " us (profile " + profile.name +
                  "): honest nodes would fail rounds";
  }
  AssumptionInputs inputs = facts.assumptions;
  inputs.plan = &plan;
  v.assumptions = EvaluateAssumptions(inputs);
  SummarizeOccupancy(facts, &v);
  ComputeStatementInputs compute;
  compute.plan = &plan;
  compute.pass = v.pass;
  compute.bound_stated = v.bound_stated;
  compute.bound_total_bytes = v.bound_stated ? v.bound.node.total_bytes : 0;
  compute.no_bound_statement = v.statement;
  compute.proof_rounds_end_after_order_us = facts.proof_rounds_end_after_order_us;
  v.compute = ComputeComputeStatement(compute);
  return v;
}

uint64_t ProofRoundsEndAfterOrderUs(const std::vector<RoundRecord>& rounds) {
  uint64_t end = 0;
  for (const RoundRecord& r : rounds) {
    if (r.proof) end = std::max(end, r.sent_after_order_us + r.elapsed_us);
  }
  return end;
}

void WriteVerdict(const VerdictFacts& facts, const VerdictSummary& v, proto::Verdict::Builder out) {
  const SessionPlan& plan = *facts.plan;
  out.setSessionId(proto::AsView(plan.session_id.data(), plan.session_id.size()));
  out.setNodeName(plan.node_name);
  out.setPass(v.pass);
  facts.failure.WriteTo(out.initFailure());
  out.setFillMicros(facts.fill_us);
  out.setFillDeadlineUs(plan.fill_deadline_us);
  WriteRoundTimings(facts.rounds, out.initRounds(static_cast<unsigned>(facts.rounds.size())));
  out.setRoundDeadlineUs(plan.profile.round_deadline_us);
  auto devices = out.initDevices(static_cast<unsigned>(plan.devices.size()));
  const double device_conf = PerDeviceConfidence(plan.profile.confidence, plan.devices.size());
  for (size_t i = 0; i < plan.devices.size(); ++i) {
    const PlannedDevice& d = plan.devices[i];
    auto w = devices[static_cast<unsigned>(i)];
    w.setSelector(d.selector);
    w.setPlannedBytes(d.planned_bytes());
    w.setBytesHeld(i < facts.bytes_held.size() ? facts.bytes_held[i] : 0);
    w.setCapacityBytes(d.capacity_bytes);
    w.setAllowedReserveBytes(d.allowed_reserve_bytes);
    w.setChunksChecked(i < facts.chunks_checked.size() ? facts.chunks_checked[i] : 0);
    // Every label of this device that was checked matched (a wrong label elsewhere does not count).
    w.setAllCorrect(!(facts.failure.reason == proto::FailureReason::WRONG_LABEL && facts.failure.device == d.selector));
    w.setConfidence(device_conf);
    w.setUnwipedBoundBytes(v.bound_stated ? v.bound.device_bytes[i] : 0);
    w.setFilledAfterUs(i < facts.filled_after_us.size() ? facts.filled_after_us[i] : 0);
  }
  out.setConfidence(plan.profile.confidence);
  WriteProfile(plan.profile, out.initProfile());
  out.setDeadlineRuleSatisfied(v.rule.satisfied);
  out.setBoundStated(v.bound_stated);
  out.setTotalUnwipedBoundBytes(v.bound_stated ? v.bound.node.total_bytes : 0);
  out.setStatement(v.statement);
  auto assumptions = out.initAssumptions(static_cast<unsigned>(v.assumptions.size()));
  for (size_t i = 0; i < v.assumptions.size(); ++i) {
    auto w = assumptions[static_cast<unsigned>(i)];
    w.setName(v.assumptions[i].name);
    w.setHeld(v.assumptions[i].held);
    w.setDetail(v.assumptions[i].detail);
  }
  out.setOrderDigest(proto::AsView(facts.order_digest.data(), facts.order_digest.size()));
  if (facts.report_digest) out.setReportDigest(proto::AsView(facts.report_digest->data(), facts.report_digest->size()));
  out.setIssuedAtUnixUs(facts.issued_at_unix_us);
  out.setOrderSentAtUnixUs(facts.order_sent_unix_us);
  if (v.occupancy_present) {
    auto o = out.initOccupancy();
    o.setWindowStartAfterOrderUs(facts.occupancy.start_after_order_us);
    o.setWindowEndAfterOrderUs(facts.occupancy.end_after_order_us);
    o.setRounds(facts.occupancy.rounds);
    o.setUnprotectedUs(facts.occupancy.unprotected_us);
    o.setDetection(v.occupancy.detection);
    o.setShortUs(v.occupancy.stated_short_us);
    o.setStated(v.occupancy_stated);
    o.setStatement(v.occupancy_statement);
  }
  auto c = out.initCompute();
  c.setStated(v.compute.stated);
  c.setStatement(v.compute.statement);
  c.setHeldLabels(v.compute.held_labels);
  c.setIngressLabels(v.compute.ingress_labels);
  c.setWorkCompressions(v.compute.work_compressions);
  c.setRateCompressionsPerS(v.compute.rate_compressions_per_s);
  c.setIntervalUs(v.compute.interval_us);
  c.setMinComputeUs(v.compute.min_compute_us);
}

StatusOr<proto::SignedEnvelope> SignVerdict(const VerdictFacts& facts, const VerdictSummary& summary,
                                            const proto::KeyPair& challenger) {
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<proto::Verdict>();
  WriteVerdict(facts, summary, verdict);
  return proto::SignMessage(verdict.asReader(), challenger);
}

WaveMemberBound WaveMemberFromVerdict(proto::Verdict::Reader verdict) {
  WaveMemberBound m;
  m.node = verdict.getNodeName().cStr();
  m.pass = verdict.getPass();
  m.bound_stated = verdict.getBoundStated();
  m.confidence = verdict.getConfidence();
  for (proto::DeviceBound::Reader d : verdict.getDevices()) {
    m.devices.push_back({d.getCapacityBytes(), d.getPlannedBytes(), d.getChunksChecked()});
  }
  return m;
}

WaveBoundSummary SummarizeWaveBound(const std::string& wave, const std::vector<WaveMemberBound>& members,
                                    bool complete) {
  WaveBoundSummary out;
  const std::string none = "no bound for wave " + wave + ": ";
  if (!complete) {
    out.statement = none +
                    "the wave is not complete (not every node of it was in the run, or the inventory does "
                    "not declare it complete)";
    return out;
  }
  if (members.empty()) {
    out.statement = none + "no members";
    return out;
  }
  out.confidence = members.front().confidence;
  std::vector<DeviceBoundInput> devices;
  std::vector<std::string> nodes;
  // A failed member is the first thing to say, before what the passing ones could state.
  for (const WaveMemberBound& m : members) {
    if (!m.pass) {
      out.statement = none + "node " + m.node + " failed";
      return out;
    }
  }
  for (const WaveMemberBound& m : members) {
    if (!m.bound_stated) {
      out.statement = none + "node " + m.node + " states no bound";
      return out;
    }
    if (m.confidence != out.confidence || !(m.confidence > 0 && m.confidence < 1)) {
      out.statement = none + "its members' verdicts are at different confidences";
      return out;
    }
    for (const DeviceBoundInput& d : m.devices) {
      if (d.planned_bytes > d.capacity_bytes) {
        out.statement = none + "node " + m.node + " has a device planned beyond its capacity";
        return out;
      }
      devices.push_back(d);
    }
    nodes.push_back(m.node);
  }
  out.bound = ComputeJointBound(devices, out.confidence);
  out.bound_stated = true;
  out.statement = "at " + FormatPercent(out.confidence) + " confidence at most " +
                  std::to_string(out.bound.total_bytes) + " bytes of wave " + wave + "'s planned memory (" +
                  std::to_string(nodes.size()) + " node(s): " + JoinNames(nodes) + "; " +
                  std::to_string(devices.size()) + " devices, taken together) were not wiped: " + JointParts(out.bound);
  return out;
}

}  // namespace wipeproof

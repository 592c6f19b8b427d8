#include "challenger/audit/verdict_recheck.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "challenger/session/assumptions.h"
#include "challenger/session/session_plan.h"
#include "challenger/session/verdict.h"
#include "proto/label_wire.h"

namespace wipeproof {

namespace {

Status RecheckAssumptions(const RecomputedFacts& facts, const SessionPlan& plan);

// The verdict's occupancy statement against `want`'s, word for word (stated or not).
Status RecheckOccupancy(proto::Verdict::Reader v, const VerdictSummary& want) {
  auto differs = [](const std::string& field, const std::string& stated, const std::string& recomputed) {
    return DataLossError("occupancy: " + field + " is " + stated +
                         ", recomputed from the order, the verdict's window and the round log: " + recomputed);
  };
  if (v.hasOccupancy() != want.occupancy_present) {
    return differs("the statement's presence", v.hasOccupancy() ? "present" : "absent",
                   want.occupancy_present ? "present" : "absent");
  }
  if (!want.occupancy_present) return Status::Ok();
  auto o = v.getOccupancy();
  if (o.getDetection() != want.occupancy.detection) {
    return differs("detection", std::to_string(o.getDetection()), std::to_string(want.occupancy.detection));
  }
  if (o.getShortUs() != want.occupancy.stated_short_us) {
    return differs("shortUs", std::to_string(o.getShortUs()), std::to_string(want.occupancy.stated_short_us));
  }
  if (o.getStated() != want.occupancy_stated) {
    return differs("stated", o.getStated() ? "true" : "false", want.occupancy_stated ? "true" : "false");
  }
  if (o.getStatement() != want.occupancy_statement) {
    return differs("the statement", "\"" + std::string(o.getStatement().cStr()) + "\"",
                   "\"" + want.occupancy_statement + "\"");
  }
  return Status::Ok();
}

// The verdict's compute statement against `want`'s (when the verdict has one: older verdicts make
// no compute claim), word for word; an unstated one's figures claim nothing and are not compared.
Status RecheckCompute(proto::Verdict::Reader v, const VerdictSummary& want) {
  if (!v.hasCompute()) return Status::Ok();
  auto differs = [](const std::string& field, const std::string& stated, const std::string& recomputed) {
    return DataLossError("compute: " + field + " is " + stated +
                         ", recomputed from the order, the bound, the signed inventory and the round log: " +
                         recomputed);
  };
  auto c = v.getCompute();
  const ComputeStatement& w = want.compute;
  if (c.getStated() != w.stated) {
    return differs("stated", c.getStated() ? "true" : "false", w.stated ? "true" : "false");
  }
  // Figures count only when stated (an unstated one claims nothing), as the recipe checks them.
  if (!w.stated) {
    if (c.getStatement() != w.statement) {
      return differs("the statement", "\"" + std::string(c.getStatement().cStr()) + "\"", "\"" + w.statement + "\"");
    }
    return Status::Ok();
  }
  const std::pair<const char*, std::pair<uint64_t, uint64_t>> numbers[] = {
      {"heldLabels", {c.getHeldLabels(), w.held_labels}},
      {"ingressLabels", {c.getIngressLabels(), w.ingress_labels}},
      {"workCompressions", {c.getWorkCompressions(), w.work_compressions}},
      {"intervalUs", {c.getIntervalUs(), w.interval_us}},
      {"minComputeUs", {c.getMinComputeUs(), w.min_compute_us}}};
  for (const auto& [field, pair] : numbers) {
    if (pair.first != pair.second) return differs(field, std::to_string(pair.first), std::to_string(pair.second));
  }
  if (c.getRateCompressionsPerS() != w.rate_compressions_per_s) {
    return differs("rateCompressionsPerS", std::to_string(c.getRateCompressionsPerS()),
                   std::to_string(w.rate_compressions_per_s));
  }
  if (c.getStatement() != w.statement) {
    return differs("the statement", "\"" + std::string(c.getStatement().cStr()) + "\"", "\"" + w.statement + "\"");
  }
  return Status::Ok();
}

}  // namespace

Status RecheckVerdictBound(const RecomputedFacts& facts) {
  SessionPlan plan = PlanFromOrder(facts.order);
  if (facts.declared != nullptr) ApplyDeclarations(*facts.declared, &plan);
  // An endorsement by any other key than the audited authority's is none: no bound from it.
  ProfileEndorsement& endorsement = plan.profile.endorsement;
  if (endorsement.signed_parameters != nullptr && endorsement.authority_key_id != facts.authority_key_id) {
    const std::string named = proto::KeyIdHex(endorsement.authority_key_id);
    endorsement = ProfileEndorsement{};
    endorsement.signature_problem = "the order's profile names authority key " + named +
                                    ", not the audited authority's " + proto::KeyIdHex(facts.authority_key_id);
  }
  proto::Verdict::Reader v = facts.verdict;
  if (facts.chunks_checked.size() != plan.devices.size() || v.getDevices().size() != plan.devices.size()) {
    return DataLossError("bound: " + std::to_string(v.getDevices().size()) + " verdict devices and " +
                         std::to_string(facts.chunks_checked.size()) + " checked-chunk counts for " +
                         std::to_string(plan.devices.size()) + " planned devices");
  }
  for (const PlannedDevice& d : plan.devices) {
    if (d.planned_bytes() > d.capacity_bytes) {
      return DataLossError("bound: device " + d.selector + " plans more bytes than its declared capacity");
    }
  }
  VerdictFacts in;
  in.plan = &plan;
  in.assumptions.inventory_signed = facts.declared != nullptr;
  in.failure.reason = v.getFailure().getReason();
  in.chunks_checked = facts.chunks_checked;
  in.occupancy = facts.occupancy;
  in.proof_rounds_end_after_order_us = facts.proof_rounds_end_after_order_us;
  // A stated bound divides by N_d: with a device never challenged there is nothing to state.
  const bool every_device_checked =
      std::all_of(facts.chunks_checked.begin(), facts.chunks_checked.end(), [](uint64_t n) { return n > 0; });
  if (!in.failure.failed() && !every_device_checked) {
    return DataLossError("bound: a passing verdict with a device that was never challenged");
  }
  const VerdictSummary want = SummarizeVerdict(in);

  auto differs = [](const std::string& field, const std::string& stated, const std::string& recomputed) {
    return DataLossError("bound: " + field + " is " + stated +
                         ", recomputed from the order and the round log: " + recomputed);
  };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  if (v.getDeadlineRuleSatisfied() != want.rule.satisfied) {
    return differs("deadlineRuleSatisfied", flag(v.getDeadlineRuleSatisfied()), flag(want.rule.satisfied));
  }
  if (v.getBoundStated() != want.bound_stated) {
    return differs("boundStated", flag(v.getBoundStated()), flag(want.bound_stated));
  }
  const double device_confidence = PerDeviceConfidence(plan.profile.confidence, plan.devices.size());
  for (unsigned d = 0; d < plan.devices.size(); ++d) {
    auto stated = v.getDevices()[d];
    const uint64_t bytes = want.bound_stated ? want.bound.device_bytes[d] : 0;
    if (stated.getUnwipedBoundBytes() != bytes) {
      return differs("device " + plan.devices[d].selector + " unwipedBoundBytes",
                     std::to_string(stated.getUnwipedBoundBytes()), std::to_string(bytes));
    }
    if (stated.getConfidence() != device_confidence) {
      return differs("device " + plan.devices[d].selector + " confidence", std::to_string(stated.getConfidence()),
                     std::to_string(device_confidence));
    }
  }
  const uint64_t total = want.bound_stated ? want.bound.total_bytes : 0;
  if (v.getTotalUnwipedBoundBytes() != total) {
    return differs("totalUnwipedBoundBytes", std::to_string(v.getTotalUnwipedBoundBytes()), std::to_string(total));
  }
  if (v.getStatement() != want.statement) {
    return differs("the statement", "\"" + std::string(v.getStatement().cStr()) + "\"", "\"" + want.statement + "\"");
  }
  WP_RETURN_IF_ERROR(RecheckOccupancy(v, want));
  WP_RETURN_IF_ERROR(RecheckCompute(v, want));
  return RecheckAssumptions(facts, plan);
}

namespace {

// The verdict's assumptions against what `plan`'s declarations allow (see the header).
Status RecheckAssumptions(const RecomputedFacts& facts, const SessionPlan& plan) {
  AssumptionInputs in;
  in.plan = &plan;
  in.inventory_signed = facts.declared != nullptr;
  in.wave_run.synchronized = plan.wave.whole_wave_in_session;  // every other member held: the wave audit's to check
  in.have_report = facts.have_report;
  in.device_total_bytes = facts.device_total_bytes;
  const std::vector<AssumptionResult> allowed = EvaluateAssumptions(in);
  auto stated = facts.verdict.getAssumptions();
  if (stated.size() != allowed.size()) {
    return DataLossError("assumptions: the verdict lists " + std::to_string(stated.size()) + ", want " +
                         std::to_string(allowed.size()));
  }
  for (unsigned i = 0; i < allowed.size(); ++i) {
    if (stated[i].getName() != allowed[i].name) {
      return DataLossError("assumptions: #" + std::to_string(i) + " is " + stated[i].getName().cStr() + ", want " +
                           allowed[i].name);
    }
    if (stated[i].getHeld() && !allowed[i].held) {
      return DataLossError("assumption " + allowed[i].name +
                           " reads held, and recomputed from the authority's signed declarations it does not: " +
                           allowed[i].detail);
    }
  }
  return Status::Ok();
}

}  // namespace

}  // namespace wipeproof

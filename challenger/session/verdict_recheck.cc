#include "challenger/session/verdict_recheck.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "challenger/session/verdict.h"
#include "proto/label_wire.h"

namespace wipeproof {

SessionPlan PlanFromOrder(proto::WipeOrder::Reader order) {
  SessionPlan plan;
  plan.node_name = order.getNodeName().cStr();
  auto id = order.getSessionId();
  std::memcpy(plan.session_id.data(), id.begin(), std::min<size_t>(id.size(), plan.session_id.size()));
  auto seed = order.getSeed();
  std::memcpy(plan.seed.data(), seed.begin(), std::min<size_t>(seed.size(), plan.seed.size()));
  auto key_id = order.getNodeKeyId();
  std::memcpy(plan.node_key_id.data(), key_id.begin(), std::min<size_t>(key_id.size(), plan.node_key_id.size()));
  plan.issued_at_unix_us = order.getIssuedAtUnixUs();
  plan.expires_at_unix_us = order.getExpiresAtUnixUs();
  plan.fill_deadline_us = order.getFillDeadlineUs();
  plan.session_timeout_us = order.getSessionTimeoutUs();
  plan.host_memory_in_plan = order.getHostMemoryInPlan();
  plan.wave_complete = order.getWaveComplete();
  plan.wave.name = order.getWaveName().cStr();

  proto::ParameterProfile::Reader p = order.getProfile();
  Profile& profile = plan.profile;
  profile.name = p.getName().cStr();
  profile.chunk_labels = order.getChunkLabels();
  profile.format = proto::FormatFromWire(order.getFormat());
  profile.rounds = order.getRounds();
  profile.round_deadline_us = order.getRoundDeadlineUs();
  profile.fill_deadline_us = order.getFillDeadlineUs();
  profile.adversary.name = p.getAdversaryClass().cStr();
  profile.adversary.t_min_ps = p.getTMinPs();
  profile.adversary.safety_factor = p.getSafetyFactor();
  profile.confidence = p.getConfidence();
  profile.calibrated = p.getCalibrated();
  profile.honest_round_p999_us = p.getHonestRoundP999Us();
  profile.calibrated_at_unix_us = p.getCalibratedAtUnixUs();
  // The order is the authority's (the audit verified it under the pinned authority key): a profile it
  // names as signed by that key, with its class's t_min and safety, is the authority's word.
  if (p.getAuthorityKeyId().size() == proto::kKeyIdBytes && p.getDocumentDigest().size() == proto::kDigestBytes) {
    ProfileEndorsement& e = profile.endorsement;
    std::memcpy(e.authority_key_id.data(), p.getAuthorityKeyId().begin(), proto::kKeyIdBytes);
    std::memcpy(e.document_digest.data(), p.getDocumentDigest().begin(), proto::kDigestBytes);
    e.signed_class = profile.adversary;
    e.signed_parameters = std::make_shared<const Profile>(profile);
  } else {
    profile.endorsement.signature_problem = "the order names no authority signature of its profile";
  }

  for (auto d : order.getDevices()) {
    PlannedDevice device;
    device.selector = d.getSelector().cStr();
    device.model = d.getModel().cStr();
    device.capacity_bytes = d.getCapacityBytes();
    device.allowed_reserve_bytes = d.getAllowedReserveBytes();
    device.first_label = d.getFirstLabel();
    device.label_count = d.getLabelCount();
    device.labels_per_round = d.getLabelsPerRound();
    device.fill_deadline_us = d.getFillDeadlineUs();
    plan.devices.push_back(std::move(device));
  }
  return plan;
}

Status RecheckVerdictBound(const RecomputedFacts& facts) {
  SessionPlan plan = PlanFromOrder(facts.order);
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
  in.failure.reason = v.getFailure().getReason();
  in.chunks_checked = facts.chunks_checked;
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
  // Why an unsigned profile states no bound (not signed, altered, another key) is the challenger's
  // knowledge, not the order's: any "no bound: " statement then stands.
  const bool reason_unknown = !plan.profile.endorsement.signed_parameters && !want.bound_stated &&
                              std::string(v.getStatement().cStr()).rfind("no bound: ", 0) == 0;
  if (v.getStatement() != want.statement && !reason_unknown) {
    return differs("the statement", "\"" + std::string(v.getStatement().cStr()) + "\"", "\"" + want.statement + "\"");
  }
  return Status::Ok();
}

}  // namespace wipeproof

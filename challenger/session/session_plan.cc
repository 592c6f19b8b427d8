#include "challenger/session/session_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "challenger/parameters/delegation_document.h"
#include "common/hex.h"
#include "proto/codec.h"
#include "proto/delegation.h"
#include "proto/label_wire.h"

namespace wipeproof {

namespace {

constexpr uint64_t kSecondUs = 1'000'000;
constexpr uint64_t kSessionTimeoutSlackUs = 60 * kSecondUs;


}  // namespace

RegionSpec SessionPlan::LabelSession() const {
  RegionSpec region;
  region.format = profile.format;
  std::memcpy(region.seed, seed.data(), kSeedBytes);
  region.chunk_labels = profile.chunk_labels;
  return region;
}

uint64_t FillWaitLimitUs(uint64_t fill_deadline_us) {
  return fill_deadline_us + std::max<uint64_t>(10 * kSecondUs, fill_deadline_us / 10);
}

uint64_t RoundWaitLimitUs(uint64_t round_deadline_us) {
  return round_deadline_us + std::max<uint64_t>(kSecondUs, round_deadline_us);
}

uint32_t TimeoutRoundsFor(uint32_t rounds, uint64_t random) {
  const uint64_t r = rounds;
  return static_cast<uint32_t>(std::min<uint64_t>(r + random % (r + 1), UINT32_MAX));
}

uint32_t DrawTimeoutRounds(uint32_t rounds) {
  uint64_t random = 0;
  proto::RandomBytes(reinterpret_cast<uint8_t*>(&random), sizeof(random));
  return TimeoutRoundsFor(rounds, random);
}

uint64_t SessionTimeoutUs(const SessionPlan& plan, uint32_t timeout_rounds) {
  const uint64_t fill = std::max(plan.fill_deadline_us, plan.wave.wave_fill_deadline_us);
  const uint64_t round = RoundWaitLimitUs(plan.profile.round_deadline_us);
  // Proof rounds twice: this node's, and waiting for the slowest member's, which start together.
  return FillWaitLimitUs(fill) + 2 * uint64_t{timeout_rounds} * round +
         uint64_t{plan.holding_batches} * (plan.hold_gap_max_us + round) +
         (plan.occupancy_window_us > 0 ? plan.occupancy_window_us + round : 0) + kSessionTimeoutSlackUs;
}

uint32_t OccupancyPoolRounds(uint64_t window_us, uint64_t mean_gap_us) {
  if (window_us == 0 || mean_gap_us == 0) return 0;
  const double n = static_cast<double>(window_us) / static_cast<double>(mean_gap_us);
  const double rounds = std::ceil(n + 8 * std::sqrt(n) + 16);
  return rounds >= kMaxOccupancyRounds ? kMaxOccupancyRounds + 1 : static_cast<uint32_t>(rounds);
}

std::vector<uint32_t> OccupancyLabelsByBytes(const std::vector<PlannedDevice>& devices, uint32_t chunk_labels,
                                             uint32_t labels_per_round) {
  uint64_t planned = 0;
  for (const PlannedDevice& d : devices) planned += d.planned_bytes();
  std::vector<uint32_t> out;
  for (const PlannedDevice& d : devices) {
    const double share = planned == 0 ? 0
                                      : static_cast<double>(labels_per_round) * static_cast<double>(d.planned_bytes()) /
                                            static_cast<double>(planned);
    const uint64_t chunks = chunk_labels == 0 ? 0 : d.label_count / chunk_labels;
    uint64_t o = std::clamp<uint64_t>(static_cast<uint64_t>(std::llround(share)), 1, std::max<uint64_t>(1, chunks));
    if (o == d.labels_per_round) o = o > 1 ? o - 1 : o + 1;
    out.push_back(o > chunks || o > UINT32_MAX ? 0 : static_cast<uint32_t>(o));
  }
  return out;
}

OccupancyRequest OccupancyRequestOf(const SessionPlan& plan, double window_s, double mean_gap_s,
                                    double shortfall_fraction, uint32_t labels_per_round) {
  uint64_t planned = 0;
  for (const PlannedDevice& d : plan.devices) planned += d.planned_bytes();
  OccupancyRequest request;
  request.window_us = static_cast<uint64_t>(std::llround(window_s * 1e6));
  request.mean_gap_us = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(mean_gap_s * 1e6)));
  request.shortfall_bytes = static_cast<uint64_t>(shortfall_fraction * static_cast<double>(planned));
  request.labels_per_round = labels_per_round;
  return request;
}

Status SetOccupancySchedule(SessionPlan* plan, const OccupancyRequest& request) {
  if (request.window_us == 0) return Status::Ok();
  if (request.mean_gap_us == 0 || request.mean_gap_us > request.window_us) {
    return InvalidArgumentError("occupancy: the mean gap " + std::to_string(request.mean_gap_us) +
                                " us must be in [1 us, the window " + std::to_string(request.window_us) + " us]");
  }
  if (request.labels_per_round == 0) return InvalidArgumentError("occupancy: labels per round must be >= 1");
  uint64_t planned = 0;
  for (const PlannedDevice& d : plan->devices) planned += d.planned_bytes();
  if (request.shortfall_bytes >= planned) {
    return InvalidArgumentError("occupancy: the shortfall " + std::to_string(request.shortfall_bytes) +
                                " bytes is not below the node's " + std::to_string(planned) + " planned bytes");
  }
  const uint32_t pool = OccupancyPoolRounds(request.window_us, request.mean_gap_us);
  if (pool > kMaxOccupancyRounds) {
    return InvalidArgumentError("occupancy: a window of " + std::to_string(request.window_us) + " us at a mean gap of " +
                                std::to_string(request.mean_gap_us) + " us needs a pool of more than " +
                                std::to_string(kMaxOccupancyRounds) + " rounds: lengthen the gap or shorten the window");
  }
  const std::vector<uint32_t> labels =
      OccupancyLabelsByBytes(plan->devices, plan->profile.chunk_labels, request.labels_per_round);
  uint64_t labels_per_round = 0, session_labels = 0;
  for (size_t i = 0; i < plan->devices.size(); ++i) {
    PlannedDevice& d = plan->devices[i];
    if (labels[i] == 0) {
      return InvalidArgumentError("occupancy: device " + d.selector + " has one chunk, which its proof rounds ask: an "
                                  "occupancy round cannot have another shape");
    }
    d.occupancy_labels = labels[i];
    labels_per_round += labels[i];
    session_labels += uint64_t{d.labels_per_round} * plan->profile.rounds + uint64_t{d.hold_labels} * plan->holding_batches;
  }
  if (labels_per_round > kMaxLabelsPerRound) {
    return InvalidArgumentError("occupancy: " + std::to_string(labels_per_round) + " labels per round, above the " +
                                std::to_string(kMaxLabelsPerRound) + " one round may ask: ask fewer");
  }
  session_labels += labels_per_round * pool;
  if (session_labels > kMaxLabelsPerSession) {
    return InvalidArgumentError("occupancy: " + std::to_string(pool) + " pooled rounds of " +
                                std::to_string(labels_per_round) + " labels take the session to " +
                                std::to_string(session_labels) + " challenged labels, above the " +
                                std::to_string(kMaxLabelsPerSession) +
                                " the challenger holds (32 bytes each): ask fewer labels per round, lengthen the gap "
                                "or shorten the window");
  }
  if (request.close_us > request.window_us) {
    return InvalidArgumentError("occupancy: the window closes after " + std::to_string(request.close_us) +
                                " us, beyond its " + std::to_string(request.window_us) + " us");
  }
  plan->occupancy_window_us = request.window_us;
  plan->occupancy_close_us = request.close_us;
  plan->occupancy_mean_gap_us = request.mean_gap_us;
  plan->occupancy_shortfall_bytes = request.shortfall_bytes;
  plan->occupancy_batches = pool;
  plan->session_timeout_us = SessionTimeoutUs(*plan, DrawTimeoutRounds(plan->profile.rounds));
  return Status::Ok();
}

void SetHoldingSchedule(SessionPlan* plan, uint64_t window_us) {
  constexpr uint64_t kMinGapUs = 1'000, kMaxGapUs = 10 * kSecondUs;
  plan->holding_batches = kHoldingBatches;
  for (PlannedDevice& d : plan->devices) {
    d.hold_labels = d.labels_per_round < 2 ? 0 : std::max<uint32_t>(1, d.labels_per_round / 8);
  }
  plan->hold_gap_max_us = std::clamp<uint64_t>(2 * window_us / kHoldingBatches, kMinGapUs, kMaxGapUs);
  plan->session_timeout_us = SessionTimeoutUs(*plan, DrawTimeoutRounds(plan->profile.rounds));
}

void WriteOrder(const SessionPlan& plan, const proto::KeyId& challenger, proto::WipeOrder::Builder out) {
  out.setProtocolVersion(proto::PROTOCOL_VERSION);
  out.setSessionId(proto::AsView(plan.session_id.data(), plan.session_id.size()));
  out.setIssuedAtUnixUs(plan.issued_at_unix_us);
  out.setExpiresAtUnixUs(plan.expires_at_unix_us);
  out.setNodeName(plan.node_name);
  out.setNodeKeyId(proto::AsView(plan.node_key_id.data(), plan.node_key_id.size()));
  out.setSeed(proto::AsView(plan.seed.data(), plan.seed.size()));
  out.setFormat(proto::FormatToWire(plan.profile.format));
  out.setChunkLabels(plan.profile.chunk_labels);
  auto devices = out.initDevices(static_cast<unsigned>(plan.devices.size()));
  for (size_t i = 0; i < plan.devices.size(); ++i) {
    const PlannedDevice& d = plan.devices[i];
    auto w = devices[static_cast<unsigned>(i)];
    w.setSelector(d.selector);
    w.setFirstLabel(d.first_label);
    w.setLabelCount(d.label_count);
    w.setAllowedReserveBytes(d.allowed_reserve_bytes);
    w.setLabelsPerRound(d.labels_per_round);
    w.setCapacityBytes(d.capacity_bytes);
    w.setModel(d.model);
    w.setFillDeadlineUs(d.fill_deadline_us);
    w.setOccupancyLabels(d.occupancy_labels);
  }
  out.setFillDeadlineUs(plan.fill_deadline_us);
  out.setRounds(0);  // never disclosed: the agent answers until `finish`
  out.setRoundDeadlineUs(plan.profile.round_deadline_us);
  WriteProfile(plan.profile, out.initProfile());
  out.setHostMemoryInPlan(plan.host_memory_in_plan);
  out.setWaveComplete(plan.wave_complete);
  out.setWaveName(plan.wave.name);
  out.setSessionTimeoutUs(plan.session_timeout_us);
  out.setChallengerKeyId(proto::AsView(challenger.data(), challenger.size()));
  out.setOccupancyWindowUs(plan.occupancy_window_us);
  out.setOccupancyMeanGapUs(plan.occupancy_mean_gap_us);
  out.setOccupancyShortfallBytes(plan.occupancy_shortfall_bytes);
}

bool RoundDeadlineWithinReach(const SessionPlan& plan) {
  return plan.reach_round_deadline_us == 0 || plan.profile.round_deadline_us <= plan.reach_round_deadline_us;
}

uint64_t PlannedLabelCount(uint64_t capacity_bytes, uint64_t reserve_bytes, uint32_t chunk_labels) {
  if (reserve_bytes >= capacity_bytes || chunk_labels == 0) return 0;
  const uint64_t labels = (capacity_bytes - reserve_bytes) / proto::kLabelBytes;
  return labels / chunk_labels * chunk_labels;
}

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
  // The order stands under a delegation that verified under the pinned authority key and lists this
  // very profile (the caller checked it, proto/delegation.h): the authority signed its class's
  // t_min and safety, and `delegate` lists only profiles whose class it signed too.
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
    device.occupancy_labels = d.getOccupancyLabels();
    plan.devices.push_back(std::move(device));
  }
  plan.occupancy_window_us = order.getOccupancyWindowUs();
  plan.occupancy_mean_gap_us = order.getOccupancyMeanGapUs();
  plan.occupancy_shortfall_bytes = order.getOccupancyShortfallBytes();
  return plan;
}

StatusOr<proto::SignedEnvelope> SignOrder(const SessionPlan& plan, const SessionKeys& keys) {
  capnp::MallocMessageBuilder message;
  auto order = message.initRoot<proto::WipeOrder>();
  WriteOrder(plan, proto::KeyIdOf(keys.challenger.public_key), order);
  WP_RETURN_IF_ERROR(proto::ValidateShape(order.asReader()).WithContext("order for node " + plan.node_name));
  proto::Bytes delegation = keys.delegation;
  if (delegation.empty()) {
    constexpr int64_t kLabDelegationUs = int64_t{86'400} * 1'000'000;
    if (keys.authority.secret_key == decltype(keys.authority.secret_key){}) {
      return FailedPreconditionError("order for node " + plan.node_name +
                                     ": this challenger holds no delegation from the authority (--delegation)");
    }
    WP_ASSIGN_OR_RETURN(delegation, LabDelegation(keys.authority, keys.challenger.public_key, plan.profile,
                                                  plan.issued_at_unix_us, kLabDelegationUs, plan.inventory_digest));
  }
  order.setDelegation(proto::AsView(delegation));
  auto covered = proto::CheckOrderDelegation(order.asReader(), keys.authority.public_key, keys.challenger.public_key,
                                             plan.issued_at_unix_us, 0);
  if (!covered.ok() && keys.check_own_delegation) {
    return FailedPreconditionError("order for node " + plan.node_name + ": " + covered.status().message());
  }
  return proto::SignMessage(order.asReader(), keys.challenger);
}

StatusOr<bool> DelegationSignsInventory(proto::WipeOrder::Reader order, const proto::PublicKey& authority,
                                        const std::optional<proto::Digest>& inventory) {
  auto delegation = proto::VerifyDelegation(order.getDelegation(), authority);
  if (!delegation.ok()) return false;
  const std::optional<proto::Digest> named = proto::NamedInventory(delegation->root());
  if (!named) return false;
  if (!inventory || *named != *inventory) {
    return FailedPreconditionError(
        "the " + proto::DescribeDelegation(delegation->root()) + " names inventory " +
        HexEncode(named->data(), named->size()) + ", and this plan comes from " +
        (inventory ? "inventory " + HexEncode(inventory->data(), inventory->size()) : std::string("no inventory")) +
        ": plan only from the inventory the authority signed (delegate --inventory)");
  }
  return true;
}

}  // namespace wipeproof

#include "challenger/plan.h"

#include <algorithm>

#include "proto/codec.h"

namespace wipeproof {

namespace {

constexpr uint64_t kSecondUs = 1'000'000;
constexpr uint64_t kSessionTimeoutSlackUs = 60 * kSecondUs;

capnp::Data::Reader DataOf(const uint8_t* data, size_t size) { return capnp::Data::Reader(data, size); }

}  // namespace

WaveContext LoneSessionWaveContext(const Inventory& inventory, const std::string& node) {
  WaveContext c;
  const Wave* wave = inventory.WaveOf(node);
  if (wave == nullptr) return c;
  c.name = wave->name;
  c.declared_complete = wave->complete;
  c.wave_nodes = wave->nodes.size();
  c.whole_wave_in_session = wave->nodes.size() == 1;
  return c;
}

uint64_t FillWaitLimitUs(uint64_t fill_deadline_us) {
  return fill_deadline_us + std::max<uint64_t>(10 * kSecondUs, fill_deadline_us / 10);
}

uint64_t RoundWaitLimitUs(uint64_t round_deadline_us) {
  return round_deadline_us + std::max<uint64_t>(kSecondUs, round_deadline_us);
}

uint64_t SessionTimeoutUs(uint64_t fill_deadline_us, uint32_t rounds, uint64_t round_deadline_us) {
  return FillWaitLimitUs(fill_deadline_us) + uint64_t{rounds} * RoundWaitLimitUs(round_deadline_us) +
         kSessionTimeoutSlackUs;
}

uint64_t PlannedLabelCount(uint64_t capacity_bytes, uint64_t reserve_bytes, uint32_t chunk_labels) {
  if (reserve_bytes >= capacity_bytes || chunk_labels == 0) return 0;
  const uint64_t labels = (capacity_bytes - reserve_bytes) / proto::kLabelBytes;
  return labels / chunk_labels * chunk_labels;
}

StatusOr<SessionPlan> BuildPlan(const Inventory& inventory, const std::string& node, const Profile& profile,
                                const WaveContext& wave, const Clock& clock) {
  WP_RETURN_IF_ERROR(ValidateProfile(profile).WithContext("profile " + profile.name));
  const InventoryNode* n = inventory.FindNode(node);
  if (n == nullptr) return NotFoundError("no node named '" + node + "' in the inventory");

  SessionPlan plan;
  plan.node_name = n->name;
  plan.address = n->address;
  plan.node_key = n->public_key;
  plan.node_key_id = proto::KeyIdOf(n->public_key);
  plan.no_nvme_in_reach = n->no_nvme_in_reach;
  plan.profile = profile;
  plan.wave = wave;
  plan.wave_complete = wave.declared_complete && wave.whole_wave_in_session;

  const uint32_t m = profile.chunk_labels;
  uint64_t next_label = 0;
  uint64_t largest_bytes = 0;
  for (const InventoryDevice& d : n->devices) {
    WP_ASSIGN_OR_RETURN(uint64_t reserve, inventory.ReserveFor(d.model));
    PlannedDevice p;
    p.selector = d.selector;
    p.model = d.model;
    p.capacity_bytes = d.capacity_bytes;
    p.allowed_reserve_bytes = reserve;
    p.label_count = PlannedLabelCount(d.capacity_bytes, reserve, m);
    if (p.label_count == 0) {
      return InvalidArgumentError("node " + n->name + " device " + d.selector + ": capacity " +
                                  std::to_string(d.capacity_bytes) + " minus reserve " + std::to_string(reserve) +
                                  " bytes holds no whole chunk of m = " + std::to_string(m) + " labels");
    }
    if (next_label > UINT64_MAX - p.label_count) {
      return InvalidArgumentError("node " + n->name + ": label ranges overflow the index space");
    }
    p.first_label = next_label;
    next_label += p.label_count;
    const uint64_t chunks = p.label_count / m;
    p.labels_per_round = static_cast<uint32_t>(std::min<uint64_t>(LabelsPerRoundFor(profile, d.model), chunks));
    plan.host_memory_in_plan = plan.host_memory_in_plan || d.selector == kHostSelector;
    largest_bytes = std::max(largest_bytes, p.planned_bytes());
    plan.devices.push_back(std::move(p));
  }

  uint64_t labels_per_round = 0;
  for (const PlannedDevice& p : plan.devices) labels_per_round += p.labels_per_round;
  if (labels_per_round > kMaxLabelsPerRound) {
    return InvalidArgumentError("node " + n->name + ": profile " + profile.name + " asks " +
                                std::to_string(labels_per_round) + " labels per round over the node's " +
                                std::to_string(plan.devices.size()) +
                                " devices (labels_per_round, labels_per_round_by_model), over the limit of " +
                                std::to_string(kMaxLabelsPerRound) + " per round");
  }
  if (labels_per_round * profile.rounds > kMaxLabelsPerSession) {
    return InvalidArgumentError(
        "node " + n->name + ": profile " + profile.name + " asks " + std::to_string(labels_per_round) +
        " labels per round for " + std::to_string(profile.rounds) + " rounds, " +
        std::to_string(labels_per_round * profile.rounds) + " in all, over the limit of " +
        std::to_string(kMaxLabelsPerSession) + " per session (the challenger holds every expected label)");
  }
  const uint64_t fill_deadline_us = FillDeadlineUs(profile, largest_bytes);
  if (fill_deadline_us > kMaxDeadlineUs) {
    return InvalidArgumentError("node " + n->name + ": profile " + profile.name + " derives a fill deadline over " +
                                std::to_string(kMaxDeadlineUs) + " us (1 day) for the largest device's " +
                                std::to_string(largest_bytes) +
                                " bytes (fill_rate_mib_per_s, fill_slack_s): raise fill_rate_mib_per_s or set "
                                "fill_deadline_ms");
  }

  proto::RandomBytes(plan.session_id.data(), plan.session_id.size());
  proto::RandomBytes(plan.seed.data(), plan.seed.size());
  plan.issued_at_unix_us = clock.UnixMicros();
  plan.expires_at_unix_us = plan.issued_at_unix_us + static_cast<int64_t>(profile.order_ttl_us);
  plan.fill_deadline_us = fill_deadline_us;
  plan.session_timeout_us = SessionTimeoutUs(std::max(plan.fill_deadline_us, wave.wave_fill_deadline_us),
                                             profile.rounds, profile.round_deadline_us);
  return plan;
}

void WriteOrder(const SessionPlan& plan, proto::WipeOrder::Builder out) {
  out.setProtocolVersion(proto::PROTOCOL_VERSION);
  out.setSessionId(DataOf(plan.session_id.data(), plan.session_id.size()));
  out.setIssuedAtUnixUs(plan.issued_at_unix_us);
  out.setExpiresAtUnixUs(plan.expires_at_unix_us);
  out.setNodeName(plan.node_name);
  out.setNodeKeyId(DataOf(plan.node_key_id.data(), plan.node_key_id.size()));
  out.setSeed(DataOf(plan.seed.data(), plan.seed.size()));
  out.setFormat(plan.profile.format == LabelFormat::k192 ? proto::LabelFormat::POSEDB_BLAKE3_N192
                                                         : proto::LabelFormat::POSEDB_BLAKE3_C1);
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
  }
  out.setFillDeadlineUs(plan.fill_deadline_us);
  out.setRounds(plan.profile.rounds);
  out.setRoundDeadlineUs(plan.profile.round_deadline_us);
  WriteProfile(plan.profile, out.initProfile());
  out.setHostMemoryInPlan(plan.host_memory_in_plan);
  out.setWaveComplete(plan.wave_complete);
  out.setWaveName(plan.wave.name);
  out.setSessionTimeoutUs(plan.session_timeout_us);
}

StatusOr<proto::SignedEnvelope> SignOrder(const SessionPlan& plan, const proto::KeyPair& authority) {
  capnp::MallocMessageBuilder message;
  auto order = message.initRoot<proto::WipeOrder>();
  WriteOrder(plan, order);
  WP_RETURN_IF_ERROR(proto::ValidateShape(order.asReader()).WithContext("order for node " + plan.node_name));
  return proto::SignMessage(order.asReader(), authority);
}

}  // namespace wipeproof

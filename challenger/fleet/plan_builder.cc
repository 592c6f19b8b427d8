#include "challenger/fleet/plan_builder.h"

#include <algorithm>

#include "proto/codec.h"
#include "proto/label_wire.h"

namespace wipeproof {

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

StatusOr<SessionPlan> BuildPlan(const Inventory& inventory, const std::string& node, const Profile& profile,
                                const WaveContext& wave, const Clock& clock) {
  WP_RETURN_IF_ERROR(ValidateProfile(profile).WithContext("profile " + profile.name));
  // What the authority declares of the node, read as an audit reads it (declared_node.h); the
  // address and pinned certificate are how to reach it, not declarations.
  WP_ASSIGN_OR_RETURN(const NodeDeclarations declared, DeclarationsOf(inventory, node));
  const InventoryNode* n = inventory.FindNode(node);

  SessionPlan plan;
  plan.node_name = declared.name;
  plan.address = n->address;
  plan.node_key = declared.public_key;
  plan.node_key_id = proto::KeyIdOf(declared.public_key);
  plan.node_certificate = n->certificate;
  plan.no_nvme_in_reach = declared.no_nvme_in_reach;
  plan.reach_round_deadline_us = declared.reach_round_deadline_us;
  plan.reach = declared.reach;
  plan.host_physical_memory_bytes = declared.host_physical_memory_bytes;
  plan.compute = declared.compute;
  plan.inventory_digest = inventory.digest;
  plan.profile = profile;
  plan.wave = wave;
  // Beyond the deadline the wave's completeness was established for, nodes outside it may reach.
  plan.wave_complete = wave.declared_complete && wave.whole_wave_in_session && RoundDeadlineWithinReach(plan);

  const uint32_t m = profile.chunk_labels;
  uint64_t next_label = 0;
  uint64_t largest_bytes = 0;
  for (const DeclaredDevice& d : declared.devices) {
    const uint64_t reserve = d.allowed_reserve_bytes;
    PlannedDevice p;
    p.selector = d.selector;
    p.model = d.model;
    p.capacity_bytes = d.capacity_bytes;
    p.partition_of = d.partition_of;
    p.partitions = d.partitions;
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
    p.fill_deadline_us = FillDeadlineUs(profile, p.planned_bytes());
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
  SetHoldingSchedule(&plan, std::max(plan.fill_deadline_us, wave.wave_fill_deadline_us));
  return plan;
}

}  // namespace wipeproof

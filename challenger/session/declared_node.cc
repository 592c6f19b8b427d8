#include "challenger/session/declared_node.h"

#include <algorithm>
#include <cstring>

namespace wipeproof {

namespace {

Status Differs(const std::string& field, const std::string& order, const std::string& declared) {
  return DataLossError("the order's " + field + " is " + order + ", the signed inventory declares " + declared);
}

}  // namespace

Status CheckOrderDeclarations(proto::WipeOrder::Reader order, const NodeDeclarations& node) {
  const proto::KeyId key_id = proto::KeyIdOf(node.public_key);
  const capnp::Data::Reader named = order.getNodeKeyId();
  if (named.size() != key_id.size() || std::memcmp(named.begin(), key_id.data(), key_id.size()) != 0) {
    return DataLossError("the order's nodeKeyId is not the id of node " + node.name + "'s key in the signed inventory (" +
                         proto::KeyIdHex(key_id) + ")");
  }
  auto devices = order.getDevices();
  if (devices.size() != node.devices.size()) {
    return Differs("device count", std::to_string(devices.size()), std::to_string(node.devices.size()));
  }
  bool host = false;
  for (unsigned i = 0; i < devices.size(); ++i) {
    const DeclaredDevice& want = node.devices[i];
    auto d = devices[i];
    const std::string at = "device " + std::to_string(i) + " ";
    if (d.getSelector() != want.selector) return Differs(at + "selector", d.getSelector().cStr(), want.selector);
    if (d.getModel() != want.model) return Differs(at + want.selector + " model", d.getModel().cStr(), want.model);
    if (d.getCapacityBytes() != want.capacity_bytes) {
      return Differs(at + want.selector + " capacityBytes", std::to_string(d.getCapacityBytes()),
                     std::to_string(want.capacity_bytes));
    }
    if (d.getAllowedReserveBytes() != want.allowed_reserve_bytes) {
      return Differs(at + want.selector + " allowedReserveBytes", std::to_string(d.getAllowedReserveBytes()),
                     std::to_string(want.allowed_reserve_bytes) + " (the reserve of model " + want.model + ")");
    }
    // The plan fills whole chunks, as many as the capacity less the reserve holds: labels planned
    // into the reserve would count the reserve twice.
    const uint32_t m = order.getChunkLabels();
    const uint64_t fits = PlannedLabelCount(want.capacity_bytes, want.allowed_reserve_bytes, m);
    if (d.getLabelCount() != fits) {
      return Differs(at + want.selector + " labelCount", std::to_string(d.getLabelCount()),
                     "a plan of " + std::to_string(fits) + " (the whole chunks of m = " + std::to_string(m) +
                         " labels its capacity less its reserve holds)");
    }
    host = host || want.selector == kHostDeviceSelector;
  }
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  if (order.getHostMemoryInPlan() != host) {
    return Differs("hostMemoryInPlan", flag(order.getHostMemoryInPlan()), flag(host) + " (its devices)");
  }
  if (order.getWaveName() != node.wave.name) {
    return Differs("waveName", "'" + std::string(order.getWaveName().cStr()) + "'", "'" + node.wave.name + "'");
  }
  if (order.getWaveComplete() && !node.wave.complete) {
    return Differs("waveComplete", "true", "wave '" + node.wave.name + "' not complete");
  }
  if (order.getWaveComplete() && node.reach_round_deadline_us != 0 &&
      order.getRoundDeadlineUs() > node.reach_round_deadline_us) {
    return Differs("waveComplete", "true",
                   "wave '" + node.wave.name + "' complete only for round deadlines up to " +
                       std::to_string(node.reach_round_deadline_us) + " us (reach_round_deadline_us), the order's is " +
                       std::to_string(order.getRoundDeadlineUs()) + " us");
  }
  return Status::Ok();
}

void ApplyDeclarations(const NodeDeclarations& node, SessionPlan* plan) {
  plan->no_nvme_in_reach = node.no_nvme_in_reach;
  plan->reach_round_deadline_us = node.reach_round_deadline_us;
  plan->reach = node.reach;
  plan->host_physical_memory_bytes = node.host_physical_memory_bytes;
  plan->compute = node.compute;
  for (size_t i = 0; i < plan->devices.size() && i < node.devices.size(); ++i) {
    plan->devices[i].partition_of = node.devices[i].partition_of;
    plan->devices[i].partitions = node.devices[i].partitions;
  }
  plan->wave.declared_complete = node.wave.complete;
  plan->wave.wave_nodes = node.wave.nodes;
  plan->wave.whole_wave_in_session = plan->wave_complete;
}

}  // namespace wipeproof

#include "challenger/session/assumptions.h"

#include <algorithm>
#include <map>

#include "challenger/session/on_chip_memory.h"
#include "proto/label_wire.h"

namespace wipeproof {

namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

AssumptionResult HostMemory(const SessionPlan& plan) {
  const PlannedDevice* host = nullptr;
  for (const PlannedDevice& d : plan.devices) {
    if (d.selector == kHostDeviceSelector) host = &d;
  }
  if (!plan.host_memory_in_plan || host == nullptr) {
    return {kHostMemoryInPlan, false,
            "host memory of node " + plan.node_name + " is not in the plan: labels could be relocated there"};
  }
  const uint64_t labels = host->planned_bytes();
  const uint64_t covered = SaturatingAdd(labels, host->allowed_reserve_bytes);
  const std::string parts =
      " (labels " + std::to_string(labels) + " + allowed reserve " + std::to_string(host->allowed_reserve_bytes) + ")";
  const uint64_t physical = plan.host_physical_memory_bytes;
  if (physical == 0) {
    return {kHostMemoryInPlan, false,
            "physical host memory not declared for node " + plan.node_name + ": the host plan covers " +
                std::to_string(covered) + " bytes" + parts +
                " of an unknown total; labels could be relocated to the rest (the inventory's "
                "host_physical_memory_bytes, the authority's finding)"};
  }
  // Labels are planned in whole chunks: less than one chunk of the capacity cannot be planned.
  const uint64_t chunk_bytes = uint64_t{plan.profile.chunk_labels} * proto::kLabelBytes;
  const uint64_t outside = physical > covered ? physical - covered : 0;
  const std::string covers = "host plan covers " + std::to_string(std::min(covered, physical)) + " of " +
                             std::to_string(physical) + " bytes of physical memory of node " + plan.node_name + parts;
  if (outside > 0 && outside >= chunk_bytes) {
    return {kHostMemoryInPlan, false,
            covers + ": " + std::to_string(outside) + " bytes are outside the plan and labels could be relocated there"};
  }
  std::string detail = covers + ", physical memory as the inventory declares it (the authority's finding)";
  if (outside > 0) {
    detail += "; the last " + std::to_string(outside) + " bytes, less than one chunk of " +
              std::to_string(plan.profile.chunk_labels) + " labels, cannot be planned";
  }
  return {kHostMemoryInPlan, true, detail};
}

// What is within reach depends on the time it has to answer: the inventory's reach declarations
// speak of round deadlines up to its reach_round_deadline_us. "" when the session's deadline is
// within it; else why a reach declaration says nothing about this session.
std::string ReachDeadlineExceeded(const SessionPlan& plan) {
  if (RoundDeadlineWithinReach(plan)) return "";
  return "the round deadline of " + std::to_string(plan.profile.round_deadline_us) +
         " us is longer than the inventory's reach_round_deadline_us of " +
         std::to_string(plan.reach_round_deadline_us) +
         " us, the longest for which the authority established what lies within reach: memory farther away may "
         "answer in time";
}

// How a held reach declaration's detail ends: the deadline it was established for, or that none is stated.
std::string ReachDeadlineNote(const SessionPlan& plan) {
  if (plan.reach_round_deadline_us == 0) {
    return " (for no stated round deadline: the inventory has no reach_round_deadline_us)";
  }
  return " (for round deadlines up to " + std::to_string(plan.reach_round_deadline_us) + " us; this session's is " +
         std::to_string(plan.profile.round_deadline_us) + " us)";
}

AssumptionResult WaveCompleteness(const SessionPlan& plan, const WaveRunResult& run) {
  const WaveContext& w = plan.wave;
  if (w.name.empty()) {
    return {kWaveComplete, false,
            "node " + plan.node_name + " is in no wave: which nodes can reach its memory is not declared"};
  }
  if (!w.declared_complete) {
    return {kWaveComplete, false,
            "wave " + w.name + " is not declared complete: nodes outside it may reach this node's memory"};
  }
  if (std::string exceeded = ReachDeadlineExceeded(plan); !exceeded.empty()) {
    return {kWaveComplete, false, "wave " + w.name + " is declared complete, but " + exceeded};
  }
  if (!w.whole_wave_in_session) {
    return {kWaveComplete, false,
            "not every one of wave " + w.name + "'s " + std::to_string(w.wave_nodes) +
                " nodes was wiped in this session's run (a lone session, or a member left out: not planned, not "
                "drained or out of service); the memory of those left out was free during the rounds"};
  }
  if (run.synchronized && !run.nodes_not_held.empty()) {
    std::string names;
    for (const std::string& n : run.nodes_not_held) names += (names.empty() ? "" : ", ") + n;
    return {kWaveComplete, false,
            "wave " + w.name + ": node(s) " + names +
                " of this wave run did not fill or did not pass every round they were sent"};
  }
  if (w.wave_nodes <= 1) {
    return {kWaveComplete, true,
            "wave " + w.name + " is declared complete" + ReachDeadlineNote(plan) + " and has no other node"};
  }
  return {kWaveComplete, true,
          "wave " + w.name + " is declared complete" + ReachDeadlineNote(plan) + " and its " +
              std::to_string(w.wave_nodes - 1) +
              " other node(s) ran in the same wave run, each filled and passed every round it was sent, and every "
              "member's proof rounds were sent only after every member's fill"};
}

AssumptionResult Nvme(const SessionPlan& plan) {
  if (plan.no_nvme_in_reach) {
    if (std::string exceeded = ReachDeadlineExceeded(plan); !exceeded.empty()) {
      return {kNoNvmeInReach, false,
              "the inventory declares no NVMe drive within reach of node " + plan.node_name + ", but " + exceeded};
    }
    return {kNoNvmeInReach, true,
            "the inventory declares no NVMe drive within reach of node " + plan.node_name + ReachDeadlineNote(plan)};
  }
  return {kNoNvmeInReach, false,
          "unknown: the inventory does not declare that no NVMe drive is within reach of node " + plan.node_name +
              " (a drive answers a random read in ~100 us)"};
}

AssumptionResult PhysicalBinding() {
  return {kPhysicalBinding, false,
          "not established: no attestation binds the answers to the node's physical GPUs (a machine at the "
          "node's address could answer for it)"};
}

// The first partitioned device (in plan order) of which some slice is unplanned, as a detail; "" when
// every slice of every partitioned device is planned.
std::string UnplannedSlices(const SessionPlan& plan) {
  std::vector<std::string> order;                        // physical devices, first slice's order
  std::map<std::string, std::vector<std::string>> planned;  // physical device: its planned slices
  std::map<std::string, uint32_t> partitions;
  for (const PlannedDevice& d : plan.devices) {
    if (d.partition_of.empty()) continue;
    if (planned.count(d.partition_of) == 0) order.push_back(d.partition_of);
    planned[d.partition_of].push_back(d.selector);
    partitions[d.partition_of] = d.partitions;
  }
  for (const std::string& device : order) {
    const std::vector<std::string>& slices = planned[device];
    if (slices.size() >= partitions[device]) continue;
    std::string names;
    for (const std::string& s : slices) names += (names.empty() ? "" : ", ") + s;
    return "device " + device + " is partitioned into " + std::to_string(partitions[device]) +
           " slices and the plan holds " + std::to_string(slices.size()) + " (" + names + "): the other " +
           std::to_string(partitions[device] - slices.size()) +
           " slices' memory is outside the plan and labels could be relocated there";
  }
  return "";
}

AssumptionResult Capacity(const AssumptionInputs& in) {
  const SessionPlan& plan = *in.plan;
  // A slice's capacity is not its GPU's: the assumption needs every slice of the GPU planned.
  const std::string unplanned = UnplannedSlices(plan);
  if (!unplanned.empty()) return {kCapacityAsDeclared, false, unplanned};
  for (const PlannedDevice& d : plan.devices) {
    if (d.partition_of.empty() && d.selector.rfind("MIG-", 0) == 0) {
      return {kCapacityAsDeclared, false,
              "device " + d.selector +
                  " is a MIG slice whose physical GPU and slice count the inventory does not declare "
                  "(partition_of, partitions): the other slices' memory may be outside the plan"};
    }
  }
  if (!in.have_report) return {kCapacityAsDeclared, false, "unknown: no fill report"};
  for (size_t i = 0; i < plan.devices.size(); ++i) {
    const PlannedDevice& d = plan.devices[i];
    const uint64_t total = i < in.device_total_bytes.size() ? in.device_total_bytes[i] : 0;
    if (total == 0) {
      return {kCapacityAsDeclared, false,
              "unknown: device " + d.selector + " reported no total (the node's own report is the only source)"};
    }
    if (total > d.capacity_bytes) {
      return {kCapacityAsDeclared, false,
              "device " + d.selector + " reports " + std::to_string(total) + " bytes total, declared " +
                  std::to_string(d.capacity_bytes) + ": " + std::to_string(total - d.capacity_bytes) +
                  " bytes are outside the plan"};
    }
  }
  return {kCapacityAsDeclared, true,
          "declared in the inventory and not contradicted: every device reports at most its declared capacity "
          "(as reported by the node; not independently verified: a node that hides memory can report less)"};
}

AssumptionResult Egress(const AssumptionInputs& in) {
  const SessionPlan& plan = *in.plan;
  const NodeReach& reach = plan.reach;
  if (reach.network_isolated) {
    return {kNoEgress, true,
            "the inventory declares node " + plan.node_name +
                " network-isolated during wipes: nothing could leave it during the session (a declaration the "
                "challenger cannot check)"};
  }
  if (reach.egress_bytes_per_s == 0) {
    return {kNoEgress, false,
            "unknown: the inventory declares neither network isolation nor an egress bandwidth for node " +
                plan.node_name + ": a checkpoint could have left it during the session"};
  }
  const bool measured = in.session_window_us > 0;
  const uint64_t window_us = measured ? in.session_window_us : plan.session_timeout_us;
  return {kNoEgress, false,
          "node " + plan.node_name + " may send " + std::to_string(reach.egress_bytes_per_s) + " bytes/s: up to " +
              std::to_string(EgressBytes(reach.egress_bytes_per_s, window_us)) +
              " bytes could have left it during the session window of " + std::to_string(window_us) + " us (" +
              (measured ? "order sent to the verdict, past the last round" : "upper bound: the session timeout") + ")"};
}

AssumptionResult UncoveredMemory(const SessionPlan& plan) {
  // Per model: devices, and the on-chip memory of one (table) when known.
  std::map<std::string, size_t> per_model;
  std::vector<std::string> models;  // inventory order
  for (const PlannedDevice& d : plan.devices) {
    if (per_model[d.model]++ == 0) models.push_back(d.model);
  }
  std::string known, unknown;
  uint64_t total = 0;
  for (const std::string& model : models) {
    const size_t n = per_model[model];
    const std::optional<OnChipMemory> chip = OnChipMemoryOf(model);
    if (!chip) {
      unknown += (unknown.empty() ? "" : ", ") + model + " x " + std::to_string(n);
      continue;
    }
    const uint64_t each = chip->total_bytes();
    for (size_t i = 0; i < n; ++i) total = SaturatingAdd(total, each);
    known += (known.empty() ? "" : "; ") + model + " x " + std::to_string(n) + ": " + std::to_string(each) +
             " bytes on-chip each (L2 " + std::to_string(chip->l2_bytes) + " + " +
             std::to_string(chip->streaming_multiprocessors) + " SMs x (" +
             std::to_string(chip->register_file_bytes_per_sm) + " register file + " +
             std::to_string(chip->l1_shared_bytes_per_sm) + " L1/shared); " + chip->source + ")";
  }
  for (const DeclaredMemory& m : plan.reach.other_memory) {
    total = SaturatingAdd(total, m.bytes);
    known += (known.empty() ? "" : "; ") + m.kind + " " + m.name + ": " + std::to_string(m.bytes) +
             " bytes (declared in the inventory)";
  }
  std::string detail = "memory of node " + plan.node_name + " that no plan covers: ";
  detail += known.empty() ? "none known" : known;
  detail += "; " + std::to_string(total) + " bytes known in all";
  if (!unknown.empty()) {
    detail += "; size unknown for " + unknown + " (on-chip memory not in the table; host CPU caches depend on the CPU)";
  }
  return {kNoUncoveredMemory, false, detail};
}

}  // namespace

uint64_t EgressBytes(uint64_t bytes_per_s, uint64_t window_us) {
  const unsigned __int128 product = static_cast<unsigned __int128>(bytes_per_s) * window_us;
  const unsigned __int128 bytes = (product + 999'999) / 1'000'000;
  return bytes > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(bytes);
}

std::vector<AssumptionResult> EvaluateAssumptions(const AssumptionInputs& in) {
  const SessionPlan& plan = *in.plan;
  std::vector<AssumptionResult> results = {HostMemory(plan),     WaveCompleteness(plan, in.wave_run),
                                           Nvme(plan),           PhysicalBinding(),
                                           Capacity(in),         Egress(in),
                                           UncoveredMemory(plan)};
  if (!in.inventory_signed) {
    // Every assumption rests on a declaration of the inventory (or never holds): without the
    // authority's word for it, none holds.
    for (AssumptionResult& r : results) {
      r.held = false;
      r.detail = std::string(kInventoryNotSigned) + "; " + r.detail;
    }
  }
  return results;
}

bool AssumptionCanBeEstablished(const std::string& name) {
  return name != kPhysicalBinding && name != kNoUncoveredMemory;
}

}  // namespace wipeproof

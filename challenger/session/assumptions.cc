#include "challenger/session/assumptions.h"

namespace wipeproof {

namespace {

AssumptionResult HostMemory(const SessionPlan& plan) {
  if (plan.host_memory_in_plan) {
    return {kHostMemoryInPlan, true, "host memory of node " + plan.node_name + " is planned (selector host)"};
  }
  return {kHostMemoryInPlan, false,
          "host memory of node " + plan.node_name + " is not in the plan: labels could be relocated there"};
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
  if (!w.whole_wave_in_session) {
    return {kWaveComplete, false,
            "only this node of wave " + w.name + "'s " + std::to_string(w.wave_nodes) +
                " nodes was wiped; the others' memory was free during the rounds"};
  }
  if (run.synchronized && !run.nodes_not_held.empty()) {
    std::string names;
    for (const std::string& n : run.nodes_not_held) names += (names.empty() ? "" : ", ") + n;
    return {kWaveComplete, false,
            "wave " + w.name + ": node(s) " + names + " did not hold labels through this session's rounds"};
  }
  if (w.wave_nodes <= 1) {
    return {kWaveComplete, true, "wave " + w.name + " is declared complete and has no other node"};
  }
  return {kWaveComplete, true,
          "wave " + w.name + " is declared complete and its " + std::to_string(w.wave_nodes - 1) +
              " other node(s) held labels through this session's rounds"};
}

AssumptionResult Nvme(const SessionPlan& plan) {
  if (plan.no_nvme_in_reach) {
    return {kNoNvmeInReach, true, "the inventory declares no NVMe drive within reach of node " + plan.node_name};
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

AssumptionResult Capacity(const AssumptionInputs& in) {
  const SessionPlan& plan = *in.plan;
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

}  // namespace

std::vector<AssumptionResult> EvaluateAssumptions(const AssumptionInputs& in) {
  const SessionPlan& plan = *in.plan;
  return {HostMemory(plan), WaveCompleteness(plan, in.wave_run), Nvme(plan), PhysicalBinding(), Capacity(in)};
}

}  // namespace wipeproof

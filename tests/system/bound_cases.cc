// bound.cc's and deadline_rule.cc's results for cases read from stdin, one line out per line in, for
// recipe_bound_test.py: it compares them with docs/audit_recipe.py's port of the same closed forms
// (the recipe uses no wipeproof code, so the bound it recomputes is a port that must agree with the
// verdict's). Doubles travel as C99 hex floats (Python's float.hex()), exactly.
//
//   bound CONFIDENCE D  CAPACITY_1 PLANNED_1 CHECKED_1 ... CAPACITY_D PLANNED_D CHECKED_D
//     -> bound OUTSIDE PLANNED MISSING TOTAL DEVICE_1 ... DEVICE_D     (ComputeBound, bytes)
//   rule CHUNK_LABELS c1|192 T_MIN_PS SAFETY ROUND_DEADLINE_US HONEST_P999_US
//     -> rule SATISFIED HONEST_MARGIN_MET                               (0 or 1 each)
//   occupancy CONFIDENCE MEAN_GAP_US UNPROTECTED_US SHORTFALL D  PLANNED_1 LABELS_1 ... PLANNED_D LABELS_D
//     -> occupancy DETECTION SHORT_US             (occupancy_bound.h: d(b) as a hex float, T* + U)
//   chains M
//     -> chains P_0 ... P_M             (kernels/exclusive_chains.h: sums of the k shortest chains)
//   compute M c1|192 CONFIDENCE BOUND_TOTAL RATE ISOLATED INGRESS_PER_S INTERVAL_US D  CAPACITY_1 LABELS_1 ...
//     -> compute STATED HELD INGRESS_LABELS WORK MIN_US<TAB>STATEMENT
//                                       (compute_statement.h for a passing node-x with a stated bound)
//
// REQUIRES (bound.h): 0 < CONFIDENCE < 1 and PLANNED_d <= CAPACITY_d. Exit status 2 on a line it
// cannot read.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "challenger/parameters/deadline_rule.h"
#include "challenger/session/bound.h"
#include "challenger/session/compute_statement.h"
#include "challenger/session/occupancy_bound.h"
#include "kernels/exclusive_chains.h"

namespace {

int Unreadable(const std::string& line) {
  std::fprintf(stderr, "bound_cases: cannot read '%s'\n", line.c_str());
  return 2;
}

bool ReadDouble(std::istringstream& in, double* out) {
  std::string text;
  if (!(in >> text)) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end != text.c_str() && *end == '\0';
}

}  // namespace

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "bound") {
      double confidence = 0;
      size_t count = 0;
      if (!ReadDouble(in, &confidence) || !(in >> count)) return Unreadable(line);
      std::vector<wipeproof::DeviceBoundInput> devices(count);
      for (wipeproof::DeviceBoundInput& d : devices) {
        if (!(in >> d.capacity_bytes >> d.planned_bytes >> d.checked_chunks)) return Unreadable(line);
      }
      const wipeproof::BoundResult b = wipeproof::ComputeBound(devices, confidence);
      std::cout << "bound " << b.node.outside_bytes << ' ' << b.node.planned_bytes << ' ' << b.node.missing_bytes << ' '
                << b.node.total_bytes;
      for (uint64_t bytes : b.device_bytes) std::cout << ' ' << bytes;
      std::cout << '\n';
    } else if (kind == "rule") {
      uint32_t chunk_labels = 0;
      std::string format;
      uint64_t t_min_ps = 0, deadline_us = 0, honest_us = 0;
      double safety = 0;
      if (!(in >> chunk_labels >> format >> t_min_ps) || !ReadDouble(in, &safety) ||
          !(in >> deadline_us >> honest_us) || (format != "c1" && format != "192")) {
        return Unreadable(line);
      }
      const wipeproof::DeadlineRuleResult rule = wipeproof::CheckDeadlineRule(
          chunk_labels, format == "c1" ? wipeproof::LabelFormat::kC1 : wipeproof::LabelFormat::k192, t_min_ps, safety,
          deadline_us, "test");
      std::cout << "rule " << (rule.satisfied ? 1 : 0) << ' '
                << (wipeproof::HonestMarginMet(deadline_us, honest_us, wipeproof::kHonestRoundMargin) ? 1 : 0) << '\n';
    } else if (kind == "occupancy") {
      double confidence = 0;
      uint64_t mean_gap_us = 0, unprotected_us = 0, shortfall = 0;
      size_t count = 0;
      if (!ReadDouble(in, &confidence) || !(in >> mean_gap_us >> unprotected_us >> shortfall >> count)) {
        return Unreadable(line);
      }
      std::vector<wipeproof::OccupancyDevice> devices(count);
      for (wipeproof::OccupancyDevice& d : devices) {
        if (!(in >> d.planned_bytes >> d.round_labels)) return Unreadable(line);
      }
      const wipeproof::OccupancyStatement o = wipeproof::ComputeOccupancyStatement(
          devices, shortfall, confidence, mean_gap_us, unprotected_us, UINT64_MAX);
      char detection[64];
      std::snprintf(detection, sizeof(detection), "%a", o.detection);
      std::cout << "occupancy " << detection << ' ' << o.stated_short_us << '\n';
    } else if (kind == "chains") {
      uint32_t m = 0;
      if (!(in >> m) || m == 0 || m > wipeproof::kMaxChunkLabels) return Unreadable(line);
      const wipeproof::ExclusiveChains chains = wipeproof::ComputeExclusiveChains(m);
      std::cout << "chains";
      for (uint64_t p : chains.prefix) std::cout << ' ' << p;
      std::cout << '\n';
    } else if (kind == "compute") {
      wipeproof::SessionPlan plan;
      std::string format;
      double confidence = 0, rate = 0;
      uint64_t bound_total = 0, interval_us = 0;
      int isolated = 0;
      size_t count = 0;
      if (!(in >> plan.profile.chunk_labels >> format) || !ReadDouble(in, &confidence) || !(in >> bound_total) ||
          !ReadDouble(in, &rate) || !(in >> isolated >> plan.reach.ingress_bytes_per_s >> interval_us >> count)) {
        return Unreadable(line);
      }
      plan.node_name = "node-x";
      plan.profile.confidence = confidence;
      plan.profile.format = format == "192" ? wipeproof::LabelFormat::k192 : wipeproof::LabelFormat::kC1;
      plan.compute.compressions_per_s = rate;
      plan.reach.network_isolated = isolated != 0;
      plan.devices.resize(count);
      for (wipeproof::PlannedDevice& d : plan.devices) {
        if (!(in >> d.capacity_bytes >> d.label_count)) return Unreadable(line);
      }
      wipeproof::ComputeStatementInputs inputs;
      inputs.plan = &plan;
      inputs.pass = true;
      inputs.bound_stated = true;
      inputs.bound_total_bytes = bound_total;
      inputs.proof_rounds_end_after_order_us = interval_us;
      const wipeproof::ComputeStatement c = wipeproof::ComputeComputeStatement(inputs);
      std::cout << "compute " << (c.stated ? 1 : 0) << ' ' << c.held_labels << ' ' << c.ingress_labels << ' '
                << c.work_compressions << ' ' << c.min_compute_us << '\t' << c.statement << '\n';
    } else {
      return Unreadable(line);
    }
  }
  return 0;
}

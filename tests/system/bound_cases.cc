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
#include "challenger/session/occupancy_bound.h"

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
    } else {
      return Unreadable(line);
    }
  }
  return 0;
}

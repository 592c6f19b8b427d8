#include "challenger/parameters/deadline_rule.h"

#include <cassert>
#include <cmath>
#include <cstdio>

namespace wipeproof {

namespace {

// Microseconds with up to two decimals, trailing zeros dropped: 491.52, 122.88, 50000.
std::string FormatMicros(double us) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.2f", us);
  std::string s(buf);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

double RecomputeFloorPs(uint32_t chunk_labels, LabelFormat format, uint64_t t_min_ps, double safety_factor) {
  assert(safety_factor >= 1.0);
  const double depth = 1.5 * static_cast<double>(chunk_labels);
  return depth * SequentialCompressionsPerNode(format) * static_cast<double>(t_min_ps) / safety_factor;
}

DeadlineRuleResult CheckDeadlineRule(uint32_t chunk_labels, LabelFormat format, uint64_t t_min_ps, double safety_factor,
                                     uint64_t round_deadline_us, const std::string& adversary_class) {
  DeadlineRuleResult r;
  r.floor_ps = RecomputeFloorPs(chunk_labels, format, t_min_ps, safety_factor);
  r.floor_us = static_cast<uint64_t>(std::floor(r.floor_ps / 1e6));
  r.round_deadline_us = round_deadline_us;
  r.satisfied = static_cast<double>(round_deadline_us) * 1e6 <= r.floor_ps;
  r.explanation = "round deadline " + std::to_string(round_deadline_us) + " us " + (r.satisfied ? "<=" : ">") +
                  " recompute floor " + FormatMicros(r.floor_ps / 1e6) + " us for class " + adversary_class;
  return r;
}

bool HonestMarginMet(uint64_t round_deadline_us, uint64_t honest_round_p999_us, double margin) {
  if (honest_round_p999_us == 0) return false;
  return static_cast<double>(round_deadline_us) >= margin * static_cast<double>(honest_round_p999_us);
}

}  // namespace wipeproof

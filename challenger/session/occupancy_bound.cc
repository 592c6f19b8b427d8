#include "challenger/session/occupancy_bound.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace wipeproof {

namespace {

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// L(b) of occupancy_bound.h, lowered by a relative 1e-12; 0 when the unasked devices cover b.
double DetectionExponent(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes) {
  double remaining = static_cast<double>(shortfall_bytes);
  struct Asked {
    double planned, labels, ratio;
  };
  std::vector<Asked> asked;
  for (const OccupancyDevice& d : devices) {
    if (d.planned_bytes == 0) continue;
    if (d.round_labels == 0) {
      remaining -= static_cast<double>(d.planned_bytes);
      continue;
    }
    const double p = static_cast<double>(d.planned_bytes), o = d.round_labels;
    asked.push_back({p, o, p / o});
  }
  if (remaining < 0 || asked.empty()) return 0;
  std::sort(asked.begin(), asked.end(), [](const Asked& a, const Asked& b) { return a.ratio > b.ratio; });
  // The prefix A of the largest ratios whose mu = (sum_A P - b) / sum_A o lies in [r_{k+1}, r_k).
  double sum_p = 0, sum_o = 0, mu = 0;
  size_t active = 0;
  for (size_t k = 0; k < asked.size(); ++k) {
    sum_p += asked[k].planned;
    sum_o += asked[k].labels;
    mu = (sum_p - remaining) / sum_o;
    active = k + 1;
    if (k + 1 == asked.size() || mu >= asked[k + 1].ratio) break;
  }
  if (!(mu > 0)) return 0;  // b at (or beyond) everything asked: not reachable under the REQUIRES
  double exponent = 0;
  for (size_t k = 0; k < active; ++k) exponent += asked[k].labels * std::log(asked[k].ratio / mu);
  return std::max(0.0, exponent * (1 - 1e-12));
}

}  // namespace

double OccupancyDetection(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes) {
  return -std::expm1(-DetectionExponent(devices, shortfall_bytes));
}

OccupancyStatement ComputeOccupancyStatement(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes,
                                             double confidence, uint64_t mean_gap_us, uint64_t unprotected_us,
                                             uint64_t window_us) {
  assert(confidence > 0 && confidence < 1 && mean_gap_us >= 1);
  OccupancyStatement out;
  out.detection = OccupancyDetection(devices, shortfall_bytes);
  if (out.detection > 0) {
    const double t = static_cast<double>(mean_gap_us) * -std::log1p(-confidence) / out.detection;
    const double padded = std::ceil(t + t * 1e-12);
    out.short_time_us = padded < 18446744073709551616.0 ? static_cast<uint64_t>(padded) : UINT64_MAX;
  } else {
    out.short_time_us = UINT64_MAX;
  }
  out.stated_short_us = SaturatingAdd(out.short_time_us, unprotected_us);
  out.says_something = out.stated_short_us < window_us;
  return out;
}

double OccupancyRoundsLogLowerTail(uint64_t rounds, double expected_rounds) {
  const double k = static_cast<double>(rounds);
  if (!(expected_rounds > k)) return 0;
  // The terms grow up to i = K < mean: from the largest, each earlier one is i / mean of the next.
  const double log_top = -expected_rounds + k * std::log(expected_rounds) - std::lgamma(k + 1);
  double sum = 0, term = 1;
  for (uint64_t i = rounds;; --i) {
    sum += term;
    if (i == 0 || term < 1e-17 * sum) break;
    term *= static_cast<double>(i) / expected_rounds;
  }
  return log_top + std::log(sum);
}

uint64_t OccupancyMeanGapFor(const std::vector<OccupancyDevice>& devices, uint64_t shortfall_bytes, double confidence,
                             uint64_t short_time_us) {
  assert(confidence > 0 && confidence < 1);
  const double detection = OccupancyDetection(devices, shortfall_bytes);
  if (!(detection > 0)) return 0;
  const double gap = static_cast<double>(short_time_us) * detection / -std::log1p(-confidence);
  // Rounded down, and a relative 1e-12 below, so the T* it yields is never above short_time_us.
  const double lowered = std::floor(gap - gap * 1e-12);
  if (!(lowered >= 1)) return 0;
  return lowered < 18446744073709551616.0 ? static_cast<uint64_t>(lowered) : UINT64_MAX;
}

}  // namespace wipeproof

#include "challenger/session/bound.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <numeric>

namespace wipeproof {

namespace {

struct Maximum {
  double missing = 0;  // M, bytes
  double lambda = 0;
  std::vector<double> fractions;
};

// M = max { sum f_d P_d : sum N_d * -ln(1 - f_d) <= L } by the prefix rule of bound.h.
Maximum MaximizeMissing(const std::vector<double>& planned, const std::vector<double>& checked, double confidence) {
  assert(confidence > 0 && confidence < 1 && planned.size() == checked.size());
  Maximum out;
  out.fractions.assign(planned.size(), 0.0);
  const double budget = -std::log1p(-confidence);  // L
  // Unchecked devices count in full; the others are sorted by r_d = P_d / N_d, largest first.
  std::vector<size_t> order;
  for (size_t d = 0; d < planned.size(); ++d) {
    if (!(planned[d] > 0)) continue;
    if (!(checked[d] > 0)) {
      out.fractions[d] = 1;
      out.missing += planned[d];
      continue;
    }
    order.push_back(d);
  }
  if (order.empty()) return out;
  std::vector<double> log_ratio(planned.size(), 0.0);
  for (size_t d : order) log_ratio[d] = std::log(planned[d]) - std::log(checked[d]);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return log_ratio[a] > log_ratio[b]; });
  double sum_n = 0, sum_n_log_r = 0, log_lambda = 0;
  size_t active = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t d = order[k];
    sum_n += checked[d];
    sum_n_log_r += checked[d] * log_ratio[d];
    log_lambda = (sum_n_log_r - budget) / sum_n;
    active = k + 1;
    // The prefix is right when lambda stays below r_k (strictly: L > 0 guarantees it) and is at
    // least the next ratio, so no device outside the prefix would be active.
    if (k + 1 == order.size() || log_lambda >= log_ratio[order[k + 1]]) break;
  }
  out.lambda = std::exp(log_lambda);
  // f_d = 1 - lambda / r_d = -expm1(ln lambda - ln r_d). ln lambda - ln r_d is small when f_d is, and
  // ln r_d is not (~20 for a GPU), so it is computed from ratios to the largest r, not as a difference
  // of the logs above: (sum_A N_j ln(r_j / r_0) - L) / sum_A N_j - ln(r_d / r_0). With one device it
  // is exactly -L / N, the one-device formula.
  const size_t top = order[0];
  const double top_ratio = planned[top] / checked[top];
  double weighted = 0;
  for (size_t k = 0; k < active; ++k) {
    const size_t j = order[k];
    weighted += checked[j] * std::log((planned[j] / checked[j]) / top_ratio);
  }
  const double log_lambda_over_top = (weighted - budget) / sum_n;
  for (size_t k = 0; k < active; ++k) {
    const size_t d = order[k];
    const double exponent = log_lambda_over_top - std::log((planned[d] / checked[d]) / top_ratio);
    const double f = -std::expm1(std::min(0.0, exponent));
    out.fractions[d] = f;
    out.missing += f * planned[d];
  }
  return out;
}

uint64_t RoundUpBytes(double bytes) {
  const double padded = std::ceil(bytes + bytes * 1e-12);
  if (!(padded < 18446744073709551616.0)) return UINT64_MAX;
  return padded <= 0 ? 0 : static_cast<uint64_t>(padded);
}

uint64_t SaturatingAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

}  // namespace

double MissingFractionBound(double confidence, uint64_t checked_chunks) {
  assert(confidence > 0 && confidence < 1 && checked_chunks >= 1);
  // -expm1(log1p(-c) / N) == 1 - (1-c)^(1/N), accurate for large N where the naive form cancels.
  return -std::expm1(std::log1p(-confidence) / static_cast<double>(checked_chunks));
}

double PerDeviceConfidence(double confidence, size_t devices) {
  assert(devices >= 1);
  return 1.0 - (1.0 - confidence) / static_cast<double>(devices);
}

JointBound ComputeJointBound(const std::vector<DeviceBoundInput>& devices, double confidence) {
  JointBound out;
  std::vector<double> planned, checked;
  for (const DeviceBoundInput& d : devices) {
    assert(d.planned_bytes <= d.capacity_bytes);
    out.outside_bytes = SaturatingAdd(out.outside_bytes, d.capacity_bytes - d.planned_bytes);
    out.planned_bytes = SaturatingAdd(out.planned_bytes, d.planned_bytes);
    planned.push_back(static_cast<double>(d.planned_bytes));
    checked.push_back(static_cast<double>(d.checked_chunks));
  }
  const Maximum m = MaximizeMissing(planned, checked, confidence);
  out.lambda = m.lambda;
  out.worst_fractions = m.fractions;
  // Never more than what is planned (rounding aside, M <= sum P_d by construction).
  // The padding (bound.h, Units) covers double rounding: relative 1e-12 of M, and 1e-14 of the
  // planned bytes for the absolute error of the exponents (a few ulp of numbers near 1).
  out.missing_bytes =
      std::min(RoundUpBytes(m.missing + 1e-14 * static_cast<double>(out.planned_bytes)), out.planned_bytes);
  out.total_bytes = SaturatingAdd(out.outside_bytes, out.missing_bytes);
  return out;
}

double JointMissingFraction(const std::vector<uint64_t>& planned_bytes, const std::vector<double>& checked_chunks,
                            double confidence) {
  std::vector<double> planned;
  double total = 0;
  for (uint64_t p : planned_bytes) {
    planned.push_back(static_cast<double>(p));
    total += static_cast<double>(p);
  }
  if (!(total > 0)) return 0;
  return MaximizeMissing(planned, checked_chunks, confidence).missing / total;
}

BoundResult ComputeBound(const std::vector<DeviceBoundInput>& devices, double confidence) {
  BoundResult out;
  out.node = ComputeJointBound(devices, confidence);
  out.total_bytes = out.node.total_bytes;
  out.per_device_confidence = PerDeviceConfidence(confidence, std::max<size_t>(1, devices.size()));
  for (const DeviceBoundInput& d : devices) {
    const uint64_t outside = d.capacity_bytes - d.planned_bytes;
    if (d.checked_chunks == 0) {
      out.device_bytes.push_back(d.capacity_bytes);
      continue;
    }
    const double fraction = MissingFractionBound(out.per_device_confidence, d.checked_chunks);
    out.device_bytes.push_back(
        SaturatingAdd(outside, static_cast<uint64_t>(std::ceil(fraction * static_cast<double>(d.planned_bytes)))));
  }
  return out;
}

}  // namespace wipeproof

// Small integer helpers and number formatting shared by the CLIs, reports and parameter checks.
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace wipeproof {

// Binary units of bytes. Divide a byte count by static_cast<double>(kGiB) for a fraction.
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

inline constexpr bool IsPowerOfTwo(uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// floor(log2(x)); 0 for x <= 1.
inline constexpr int FloorLog2(uint64_t x) {
  int k = 0;
  while (k < 63 && (uint64_t{1} << (k + 1)) <= x) ++k;
  return k;
}

// `x` with exactly `decimals` digits after the point ("%.*f"): FormatFixed(0.125, 2) = "0.13".
std::string FormatFixed(double x, int decimals);

// A byte count for people, in binary units with two decimals: "24.00 GiB" from 1 GiB (2^30 bytes)
// up, "4.00 MiB" below it, "512 bytes" below 1 MiB. Printed beside the raw count, never instead.
std::string FormatBytesHuman(uint64_t bytes);

// Nearest-rank percentile of sorted samples: the smallest sample with at least p of all samples at
// or below it (calibration's round-time statistics, the benchmarks' latencies).
// REQUIRES: !sorted.empty(), 0 < p <= 1.
template <typename T>
T NearestRankPercentile(const std::vector<T>& sorted, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size()) - 1e-9));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace wipeproof

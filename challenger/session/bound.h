// The bound a passing session states (design-brief.md "Protocol v1", step 4).
//
// Per device d with N_d distinct challenged chunks, all answered correctly, at confidence c_d:
//   unwiped_d <= outside_d + (1 - (1 - c_d)^(1/N_d)) * planned_d
// where planned_d = labelCount * 32 (the bytes the plan fills) and outside_d = capacity_d -
// planned_d, the device's declared memory that never held labels: the authority's allowed reserve
// plus the sub-chunk remainder the plan rounds away (< m * 32 bytes). With whole-chunk capacities
// outside_d is exactly the brief's reserve_d. Why: if a fraction f of the planned labels is missing,
// each uniformly drawn challenge finds one with probability >= f, so N_d clean answers happen with
// probability <= (1-f)^N_d; solving (1-f)^N_d = 1 - c_d for f gives the term above.
//
// All devices together, at confidence c: run each device at c_d = 1 - (1-c)/D (D devices) and sum;
// by the union bound all per-device statements hold at once with probability >= c.
//
// Units: bytes. Results are rounded up to whole bytes (a bound must not shrink by rounding).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace wipeproof {

// 1 - (1 - confidence)^(1/checked_chunks): the largest missing fraction of a device that passes
// `checked_chunks` uniform challenges with probability >= 1 - confidence.
// REQUIRES: 0 < confidence < 1, checked_chunks >= 1.
double MissingFractionBound(double confidence, uint64_t checked_chunks);

// Per-device confidence of a D-device union bound at overall confidence c: 1 - (1-c)/D.
double PerDeviceConfidence(double confidence, size_t devices);

struct DeviceBoundInput {
  uint64_t capacity_bytes = 0;  // declared capacity
  uint64_t planned_bytes = 0;   // labelCount * 32; <= capacity_bytes
  uint64_t checked_chunks = 0;  // N_d, distinct chunks challenged over all rounds
};

struct BoundResult {
  std::vector<uint64_t> device_bytes;  // per device, at per_device_confidence
  double per_device_confidence = 0;
  uint64_t total_bytes = 0;  // sum of device_bytes; holds at the overall confidence
};

// REQUIRES: 0 < confidence < 1, every checked_chunks >= 1, planned <= capacity.
BoundResult ComputeBound(const std::vector<DeviceBoundInput>& devices, double confidence);

}  // namespace wipeproof

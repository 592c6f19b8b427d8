#include "challenger/session/bound.h"

#include <cassert>
#include <cmath>

namespace wipeproof {

double MissingFractionBound(double confidence, uint64_t checked_chunks) {
  assert(confidence > 0 && confidence < 1 && checked_chunks >= 1);
  // -expm1(log1p(-c) / N) == 1 - (1-c)^(1/N), accurate for large N where the naive form cancels.
  return -std::expm1(std::log1p(-confidence) / static_cast<double>(checked_chunks));
}

double PerDeviceConfidence(double confidence, size_t devices) {
  assert(devices >= 1);
  return 1.0 - (1.0 - confidence) / static_cast<double>(devices);
}

BoundResult ComputeBound(const std::vector<DeviceBoundInput>& devices, double confidence) {
  BoundResult out;
  out.per_device_confidence = PerDeviceConfidence(confidence, devices.size());
  for (const DeviceBoundInput& d : devices) {
    assert(d.planned_bytes <= d.capacity_bytes);
    const double fraction = MissingFractionBound(out.per_device_confidence, d.checked_chunks);
    const double missing = std::ceil(fraction * static_cast<double>(d.planned_bytes));
    const uint64_t bytes = (d.capacity_bytes - d.planned_bytes) + static_cast<uint64_t>(missing);
    out.device_bytes.push_back(bytes);
    out.total_bytes += bytes;
  }
  return out;
}

}  // namespace wipeproof

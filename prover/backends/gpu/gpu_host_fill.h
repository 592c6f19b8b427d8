// GPU-filled host memory: the host backend's memory labeled by a GPU (the device computes, its
// writes land in host memory over the bus), so a host wipe runs at GPU speed rather than CPU
// speed. The host range is pinned and mapped into the GPU (prover/backends/gpu/device_region.h
// AdoptHostMemory); the chunks' scratch lives in the GPU's own memory for the duration of the
// fill and is freed afterwards. The bytes are the CPU engine's, label for label.
//
// Thread-safety: thread-compatible (one fill at a time per filler).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "kernels/gpu/gpu_runtime.h"
#include "prover/backends/backend.h"
#include "prover/backends/gpu/gpu_backend.h"

namespace wipeproof {

class GpuHostFiller {
 public:
  // Device memory the filler may use as scratch (side scratch): more means more chunks in flight.
  static constexpr uint64_t kDefaultScratchBytes = 4ull << 30;

  // Uses device `ordinal` of `runtime`. Errors: UNAVAILABLE when it has no such device.
  static StatusOr<std::unique_ptr<GpuHostFiller>> Create(std::unique_ptr<gpu::GpuRuntime> runtime, int ordinal = 0,
                                                         uint64_t scratch_bytes = kDefaultScratchBytes);

  // Writes plan.count labels to host[0 .. 32 * plan.count), label g at host + 32 * (g - first).
  // REQUIRES: host is 32-byte aligned and holds at least 32 * plan.count bytes.
  // Errors: as DeviceMemory::Fill; INTERNAL for a device error (the host memory then holds a
  // partial fill: fill it again or on the CPU).
  Status Fill(uint8_t* host, const RegionSpec& plan, const FillOptions& options);

  // "cuda:GPU-..." / "hip:0000:..": which device labels the host memory (for reports).
  const std::string& device() const { return device_; }

 private:
  GpuHostFiller(std::unique_ptr<gpu::GpuRuntime> runtime, int ordinal, uint64_t scratch_bytes, std::string device)
      : runtime_(std::move(runtime)), ordinal_(ordinal), scratch_bytes_(scratch_bytes), device_(std::move(device)) {}

  std::unique_ptr<gpu::GpuRuntime> runtime_;
  int ordinal_;
  uint64_t scratch_bytes_;
  std::string device_;
};

}  // namespace wipeproof

// The GPU backends (CUDA and HIP, backend.h) over one runtime-neutral implementation: a Backend
// that enumerates the runtime's devices and hands out DeviceMemory backed by gpu::DeviceRegion
// (prover/backends/gpu/device_region.h: acquisition with back-off, fill passes, lookup).
// gpu_runtimes.h binds it to the CUDA and HIP runtimes; tests bind it to the CPU-emulated runtime.
//
// Devices are named by the runtime's stable id: "GPU-<uuid>" (CUDA), the PCI id (HIP).
// DeviceInfo.held_by_others_bytes is total - free - what this backend holds, read from the
// runtime (it includes this process's own runtime context, typically a few hundred MiB).
//
// Thread-safety: the backend is thread-safe; DeviceMemory as backend.h describes.
#pragma once

#include <memory>

#include "common/status.h"
#include "kernels/gpu/gpu_runtime.h"
#include "prover/backends/backend.h"
#include "prover/backends/gpu/fill_passes.h"
#include "prover/backends/gpu/memory_acquisition.h"

namespace wipeproof {

struct GpuBackendConfig {
  gpu::FillTuning tuning;         // fill policy (defaults suit H100/H200/MI300-class GPUs)
  gpu::AcquisitionPolicy policy;  // piece sizes for taking memory
};

// A backend of `kind` (kCuda or kHip) over `runtime`. Errors: UNAVAILABLE when the runtime cannot
// start or sees no device (the reason is in the message: the factory lists it as disabled).
StatusOr<std::unique_ptr<Backend>> StartGpuBackend(DeviceKind kind, std::unique_ptr<gpu::GpuRuntime> runtime,
                                                   const GpuBackendConfig& config = {});

}  // namespace wipeproof

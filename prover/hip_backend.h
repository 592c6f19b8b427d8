// The AMD backend: the GPU backend (gpu_backend.h) over the HIP runtime (kernels/gpu,
// label_kernels.cu compiled as HIP). Built when WIPEPROOF_HIP is on.
#pragma once

#include <memory>

#include "prover/gpu_backend.h"

namespace wipeproof {

// Errors: UNAVAILABLE when the HIP runtime cannot start or sees no device.
StatusOr<std::unique_ptr<Backend>> NewHipBackend(const GpuBackendConfig& config = {});

}  // namespace wipeproof

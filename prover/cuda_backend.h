// The NVIDIA backend: the GPU backend (gpu_backend.h) over the CUDA runtime (kernels/gpu,
// label_kernels.cu compiled by nvcc). Built when WIPEPROOF_CUDA is on.
#pragma once

#include <memory>

#include "prover/gpu_backend.h"

namespace wipeproof {

// Errors: UNAVAILABLE when the CUDA runtime or driver cannot start, or sees no device.
StatusOr<std::unique_ptr<Backend>> NewCudaBackend(const GpuBackendConfig& config = {});

}  // namespace wipeproof

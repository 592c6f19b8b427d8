#include "prover/cuda_backend.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> NewCudaBackend(const GpuBackendConfig& config) {
  return StartGpuBackend(DeviceKind::kCuda, gpu::MakeCudaRuntime(), config);
}

}  // namespace wipeproof

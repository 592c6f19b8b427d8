#include "prover/hip_backend.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> NewHipBackend(const GpuBackendConfig& config) {
  return StartGpuBackend(DeviceKind::kHip, gpu::MakeHipRuntime(), config);
}

}  // namespace wipeproof

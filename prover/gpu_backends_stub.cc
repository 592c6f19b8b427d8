// Used until/unless the CUDA and HIP backends are compiled in (WIPEPROOF_CUDA / WIPEPROOF_HIP).
#include "prover/gpu_backends.h"
#include "prover/gpu_host_fill.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> MakeCudaBackend() { return UnavailableError("built without CUDA"); }
StatusOr<std::unique_ptr<Backend>> MakeHipBackend() { return UnavailableError("built without HIP"); }
StatusOr<std::unique_ptr<GpuHostFiller>> MakeGpuHostFiller() { return UnavailableError("built without GPU backends"); }

}  // namespace wipeproof

// Used until/unless the CUDA and HIP backends are compiled in (WIPEPROOF_CUDA / WIPEPROOF_HIP).
#include "prover/gpu_backends.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> MakeCudaBackend() { return UnavailableError("built without CUDA"); }
StatusOr<std::unique_ptr<Backend>> MakeHipBackend() { return UnavailableError("built without HIP"); }

}  // namespace wipeproof

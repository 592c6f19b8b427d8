#include "prover/backends/gpu/gpu_runtimes.h"

#include <string>

#include "prover/backends/gpu/gpu_backend.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> MakeCudaBackend() {
#if defined(WIPEPROOF_HAVE_CUDA)
  return StartGpuBackend(DeviceKind::kCuda, gpu::MakeCudaRuntime());
#else
  return UnavailableError("built without CUDA");
#endif
}

StatusOr<std::unique_ptr<Backend>> MakeHipBackend() {
#if defined(WIPEPROOF_HAVE_HIP)
  return StartGpuBackend(DeviceKind::kHip, gpu::MakeHipRuntime());
#else
  return UnavailableError("built without HIP");
#endif
}

StatusOr<std::unique_ptr<GpuHostFiller>> MakeGpuHostFiller() {
#if defined(WIPEPROOF_HAVE_CUDA) || defined(WIPEPROOF_HAVE_HIP)
  std::string why;
#if defined(WIPEPROOF_HAVE_CUDA)
  auto cuda = GpuHostFiller::Create(gpu::MakeCudaRuntime());
  if (cuda.ok()) return cuda;
  why += "cuda: " + cuda.status().message() + "; ";
#endif
#if defined(WIPEPROOF_HAVE_HIP)
  auto hip = GpuHostFiller::Create(gpu::MakeHipRuntime());
  if (hip.ok()) return hip;
  why += "hip: " + hip.status().message() + "; ";
#endif
  return UnavailableError("no GPU for filling host memory (" + why + "built backends only)");
#else
  return UnavailableError("built without GPU backends");
#endif
}

}  // namespace wipeproof

// The factory's GPU constructors when at least one GPU backend is compiled in (the stub,
// gpu_backends_stub.cc, serves builds with neither).
#include "prover/gpu_backends.h"

#include "prover/gpu_host_fill.h"

#if defined(WIPEPROOF_HAVE_CUDA)
#include "prover/cuda_backend.h"
#endif
#if defined(WIPEPROOF_HAVE_HIP)
#include "prover/hip_backend.h"
#endif

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> MakeCudaBackend() {
#if defined(WIPEPROOF_HAVE_CUDA)
  return NewCudaBackend();
#else
  return UnavailableError("built without CUDA");
#endif
}

StatusOr<std::unique_ptr<Backend>> MakeHipBackend() {
#if defined(WIPEPROOF_HAVE_HIP)
  return NewHipBackend();
#else
  return UnavailableError("built without HIP");
#endif
}

StatusOr<std::unique_ptr<GpuHostFiller>> MakeGpuHostFiller() {
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
}

}  // namespace wipeproof

// The GPU backends' bindings to the runtimes this build has: the runtime-neutral GPU backend
// (gpu_backend.h) over CUDA (kernels/gpu/label_kernels.cu built by nvcc, WIPEPROOF_CUDA) or HIP
// (the same source built as HIP, WIPEPROOF_HIP), and the GPU filler of host memory
// (gpu_host_fill.h) over the first runtime that starts. These are the only functions that name a
// runtime; the factory (backend_factory.h) calls them.
//
// Errors: UNAVAILABLE with the reason ("built without CUDA", "no device: cudaErrorNoDevice ...")
// when a runtime cannot run; the factory lists that backend as disabled.
// Thread-safety: thread-safe (each call starts its own runtime object).
#pragma once

#include <memory>

#include "common/status.h"
#include "prover/backends/backend.h"
#include "prover/backends/gpu/gpu_host_fill.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> MakeCudaBackend();
StatusOr<std::unique_ptr<Backend>> MakeHipBackend();
// The first GPU this build can use (CUDA first, then HIP), as a host filler.
StatusOr<std::unique_ptr<GpuHostFiller>> MakeGpuHostFiller();

}  // namespace wipeproof

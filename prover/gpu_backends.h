// Constructors of the GPU backends. Each returns UNAVAILABLE with the reason ("built without
// CUDA", "no device: cudaErrorNoDevice ...") when it cannot run; the factory lists it as disabled.
#pragma once

#include <memory>

#include "common/status.h"
#include "prover/backend.h"

namespace wipeproof {

StatusOr<std::unique_ptr<Backend>> MakeCudaBackend();
StatusOr<std::unique_ptr<Backend>> MakeHipBackend();

}  // namespace wipeproof

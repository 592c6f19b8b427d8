// Host side of the per-session kernel constants (kernel_args.h SessionConstants), following
// label-spec.md §4 (c1 chunk_key) and §5 (192 chunk_seed, descriptor, context keys).
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "kernels/gpu/kernel_args.h"
#include "kernels/label_spec.h"

namespace wipeproof {
namespace gpu {

// Constants for running graphs of `graph_labels` outputs (m, or m' for a 192 trailing partial
// chunk) in a session with chunk size `chunk_labels`.
SessionConstants BuildSessionConstants(LabelFormat format, const uint8_t seed[kSeedBytes], uint32_t chunk_labels,
                                       uint32_t graph_labels);

}  // namespace gpu
}  // namespace wipeproof

// Known answers compiled into the benchmark, so it proves its own correctness before printing a
// rate. The cases are from tests/testdata/labels-public.json (label-spec.md §7),
// which came from an independent implementation of the spec (c1) and the public PoSE-DB prototype
// (192 at m = 2^14). Each is one whole chunk at m = 2^14, so it exercises the full-size graph.
//
// Thread-safety: the checks use only their arguments.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"
#include "prover/backends/backend.h"

namespace wipeproof {

struct KnownAnswer {
  LabelFormat format;
  const char* seed_hex;    // 32 bytes
  uint32_t chunk_labels;   // m
  uint64_t first;          // global index; a multiple of m
  uint64_t count;          // labels: exactly m (one chunk)
  const char* sha256_hex;  // SHA-256 of the count labels concatenated
};

// The case used for `format`.
const KnownAnswer& BenchKnownAnswer(LabelFormat format);
// "posedb-blake3-c1 m=16384 first=49152 count=16384".
std::string KnownAnswerName(const KnownAnswer& ka);

// Fills the case's range into `memory` through its backend, looks the labels up and compares the
// SHA-256. REQUIRES: memory.label_capacity() >= ka.count.
// Errors: Fill/Lookup errors; DATA_LOSS naming the expected and computed digests.
Status CheckKnownAnswerOnDevice(DeviceMemory& memory, const KnownAnswer& ka, const FillOptions& options);

// The same check through RecomputeChunk (the verifier path) at SIMD level `simd`.
Status CheckKnownAnswerByRecompute(const KnownAnswer& ka, SimdLevel simd);

}  // namespace wipeproof

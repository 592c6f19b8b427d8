// The flags of wipeproof-prover. gflags flags are process-global, so flags shared by several
// subcommands (--format, --chunk_labels, --threads, --simd) are defined once here; each subcommand
// lists the ones it takes (cli.h Subcommand::flags) and main.cc rejects the others.
// The helpers turn flag text into typed values with INVALID_ARGUMENT naming the flag.
#pragma once

#include <cstdint>

#include <gflags/gflags.h>

#include "common/status.h"
#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"

DECLARE_string(format);
DECLARE_string(seed);
DECLARE_uint64(chunk_labels);
DECLARE_uint64(first);
DECLARE_uint64(count);
DECLARE_bool(sha256);
DECLARE_int32(threads);
DECLARE_string(simd);
DECLARE_string(progress);
DECLARE_string(what);
DECLARE_string(backend);
DECLARE_string(device);
DECLARE_double(seconds);
DECLARE_double(gib);
DECLARE_double(reserve_gib);
DECLARE_uint32(samples);

namespace wipeproof {

// --format. Errors: INVALID_ARGUMENT for a name other than the two formats.
StatusOr<LabelFormat> FormatFromFlag();
// --seed: exactly 64 hex digits. Errors: INVALID_ARGUMENT (missing, wrong length, non-hex).
Status SeedFromFlag(uint8_t seed[kSeedBytes]);
// --chunk_labels, or `default_m` when the flag is 0 (default_m 0: the flag is required).
// Errors: INVALID_ARGUMENT when missing or outside [1, 2^20].
StatusOr<uint32_t> ChunkLabelsFromFlag(uint32_t default_m);
// --threads (0: all cores). Errors: INVALID_ARGUMENT when negative.
StatusOr<int> ThreadsFromFlag();
// --simd ("": the best this CPU allows). Errors: INVALID_ARGUMENT for an unknown name or a level
// above BestSimdLevel() (not supported by the CPU, or capped by WIPEPROOF_SIMD).
StatusOr<SimdLevel> SimdFromFlag();
// --progress (auto|always|never): whether to draw the progress line now (auto: stderr is a
// terminal). Errors: INVALID_ARGUMENT for another value.
StatusOr<bool> ProgressFromFlag();
// Worker threads a value from ThreadsFromFlag() means: `threads`, or the hardware's when 0.
int EffectiveThreads(int threads);

}  // namespace wipeproof

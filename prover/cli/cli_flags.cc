#include "prover/cli/cli_flags.h"

#include <string>
#include <thread>

#include "common/hex.h"
#include "common/progress_line.h"
#include "kernels/graph_schedule.h"

DEFINE_string(format, "posedb-blake3-c1", "label format: posedb-blake3-c1 or posedb-blake3-192 (label-spec.md §4, §5)");
DEFINE_string(seed, "", "session seed: 64 hex digits (32 bytes); required");
DEFINE_uint64(chunk_labels, 0,
              "m, labels per chunk (graph outputs), in [1, 1048576]; required for labels and graph-info, "
              "bench default 16384");
DEFINE_uint64(first, 0, "first global label index (labels); default 0");
DEFINE_uint64(count, 0, "number of labels, >= 1; required");
DEFINE_bool(sha256, false, "print only the SHA-256 (hex) of the labels concatenated instead of one hex label per line");
DEFINE_int32(threads, 0, "worker threads; 0 = all hardware threads");
DEFINE_string(simd, "", "node-hash path: portable, avx2 or avx512; default the widest the CPU supports");
DEFINE_string(progress, "auto",
              "progress line on stderr when the work takes more than a second: auto (only when stderr is a "
              "terminal), always, never");
DEFINE_string(what, "labeler",
              "benchmark: labeler (fill rate of the backend), verify (one chunk recomputed on one core), "
              "fill (acquire, fill and spot-check --gib of device memory), all (the node profile for calibration), "
              "rounds (round latency against the real agent, in process and over TCP/TLS)");
DEFINE_string(backend, "cpu", "device backend: cpu (host memory), cuda or hip");
DEFINE_string(device, "", "device id (e.g. host, GPU-<uuid>); default the backend's first device");
DEFINE_double(seconds, 3, "seconds to run the labeler and verify benchmarks; default 3");
DEFINE_double(gib, 1, "fill benchmark: GiB (2^30 bytes) to acquire; 0 = all available minus --reserve_gib");
DEFINE_double(reserve_gib, 1, "fill benchmark with --gib=0: GiB left free; default 1");
DEFINE_uint32(samples, 32, "fill benchmark: chunks spot-checked against RecomputeChunk after the fill; default 32");

namespace wipeproof {

StatusOr<LabelFormat> FormatFromFlag() {
  LabelFormat format;
  if (!ParseLabelFormat(FLAGS_format, &format)) {
    return InvalidArgumentError("--format must be posedb-blake3-c1 or posedb-blake3-192, got '" + FLAGS_format + "'");
  }
  return format;
}

Status SeedFromFlag(uint8_t seed[kSeedBytes]) {
  if (FLAGS_seed.empty()) return InvalidArgumentError("--seed is required (64 hex digits)");
  return HexDecodeExact(FLAGS_seed, kSeedBytes, seed, "--seed");
}

StatusOr<uint32_t> ChunkLabelsFromFlag(uint32_t default_m) {
  // Given as 0 is out of range, not missing.
  const bool given = !gflags::GetCommandLineFlagInfoOrDie("chunk_labels").is_default;
  uint64_t m = FLAGS_chunk_labels == 0 && !given ? default_m : FLAGS_chunk_labels;
  if (m == 0 && !given) return InvalidArgumentError("--chunk_labels is required (m in [1, 1048576])");
  if (!ChunkLabelsInRange(m)) {
    return InvalidArgumentError("--chunk_labels must be in [1, 1048576], got " + std::to_string(m));
  }
  return static_cast<uint32_t>(m);
}

StatusOr<int> ThreadsFromFlag() {
  if (FLAGS_threads < 0) return InvalidArgumentError("--threads must be >= 0, got " + std::to_string(FLAGS_threads));
  return static_cast<int>(FLAGS_threads);
}

StatusOr<SimdLevel> SimdFromFlag() {
  const SimdLevel best = BestSimdLevel();
  if (FLAGS_simd.empty()) return best;
  SimdLevel level;
  if (FLAGS_simd == "portable") {
    level = SimdLevel::kPortable;
  } else if (FLAGS_simd == "avx2") {
    level = SimdLevel::kAvx2;
  } else if (FLAGS_simd == "avx512") {
    level = SimdLevel::kAvx512;
  } else {
    return InvalidArgumentError("--simd must be portable, avx2 or avx512, got '" + FLAGS_simd + "'");
  }
  if (level > best) {
    return InvalidArgumentError("--simd=" + FLAGS_simd + " is not available here (best: " + SimdLevelName(best) +
                                "; the CPU or WIPEPROOF_SIMD limits it)");
  }
  return level;
}

int EffectiveThreads(int threads) {
  if (threads > 0) return threads;
  unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}

StatusOr<bool> ProgressFromFlag() {
  WP_ASSIGN_OR_RETURN(ProgressMode mode, ParseProgressMode(FLAGS_progress));
  return ProgressWanted(mode);
}

}  // namespace wipeproof

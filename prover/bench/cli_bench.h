// Internals of `wipeproof-prover bench` (cli_bench*.cc): the parsed setup shared by the three
// benchmarks and the JSON helpers. Every benchmark checks a known answer (known_answer.h) through
// the path it measures before it prints a rate.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "common/cli_subcommand.h"
#include "kernels/label_spec.h"
#include "kernels/simd/hash16.h"
#include "prover/backends/backend.h"
#include "prover/backends/backend_factory.h"

namespace wipeproof {

constexpr uint32_t kBenchDefaultChunkLabels = 16384;  // 2^14, the CPU-class reference deployment
// Issue 2 targets (design-brief.md "Anchors and targets").
constexpr double kTargetCompressionsPerCore = 79e6;  // 60% of BLAKE3 hash_many AVX-512 on this machine kind
constexpr double kTargetVerifyMs = 60;               // one chunk at m = 2^14, one core

struct BenchSetup {
  std::string backend_name;  // cpu, cuda, hip
  LabelFormat format = LabelFormat::kC1;
  uint32_t chunk_labels = 0;
  int threads = 0;  // as given (0: all cores); host only
  SimdLevel simd = SimdLevel::kPortable;  // host only
  double seconds = 0;
  BackendSet backends;        // holds the backend below
  Backend* backend = nullptr;  // null for --what=verify
  DeviceInfo device;
};

// `wipeproof-prover bench` (cli_bench.cc): parses the setup, runs --what.
int RunBench();
const CliSubcommand& BenchSubcommand();  // its help and flags beside RunBench

int RunBenchLabeler(BenchSetup& setup);  // cli_bench_labeler.cc
int RunBenchVerify(BenchSetup& setup);   // cli_bench_verify.cc
int RunBenchFill(BenchSetup& setup);     // cli_bench_fill.cc
int RunBenchAll(BenchSetup& setup);      // cli_bench_all.cc: the signed node profile for calibration
int RunBenchRounds(BenchSetup& setup);   // cli_bench_rounds.cc: round latency against the real agent

// Fields every benchmark prints first: bench, backend, device, format, m, and for the host
// threads, cores and SIMD level/width.
nlohmann::ordered_json BenchHeader(const char* what, const BenchSetup& setup);
// Node hashes the labeler evaluates per chunk, and BLAKE3 compressions it computes per node hash:
// c1: 1. 192: 2, plus block 0's chaining value for node numbers the process-wide cache
// (kernels/cv0_cache.h) does not cover; that one is seed- and chunk-independent, so a path that
// labels `block0_sharing` chunks side by side computes it once for all of them (the host fill
// batches 16 chunks; a single-chunk verifier shares nothing: 1). block0_sharing 0: count only the
// 2 compressions that depend on the chunk (used where the sharing is unknown, e.g. GPUs).
struct ChunkCost {
  uint64_t nodes_hashed = 0;
  double compressions_per_node = 0;
};
ChunkCost ChunkCostFor(LabelFormat format, uint32_t chunk_labels, int block0_sharing);
// Adds what only the backend knows: "fill_details" (`fill_details_json`, the DeviceMemory's
// FillDetailsJson() of the last fill, when not "{}") and, when the backend measures one,
// "raw_compressions_per_s" (its node-hash code without memory traffic,
// Backend::MeasureCompressionRate) with "fraction_of_raw" = compressions_per_s / raw.
// Call it after releasing the memory: the raw measurement may need the device.
void AddBackendFigures(BenchSetup& setup, const std::string& fill_details_json, double compressions_per_s,
                       nlohmann::ordered_json* out);
// CPU time (user + system) of the whole process / of the calling thread, in seconds. The benchmarks
// report rates per CPU-second next to wall-clock rates: on a shared machine the former still
// measures the code, the latter what a deadline would see.
double ProcessCpuSeconds();
double ThreadCpuSeconds();
// `x` rounded to `digits` significant digits, for readable JSON.
double Sig(double x, int digits = 4);
// Hardware threads, and the cores a run with `threads` workers uses (min of the two).
int CoresUsed(int threads);

}  // namespace wipeproof

// `bench --what=verify`: the challenger's check, RecomputeChunk (all outputs of one chunk), timed
// on the calling thread (one core) over fresh chunk indices for --seconds (at least 3 chunks),
// after the known-answer check through the same function.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "kernels/chunk_verifier.h"
#include "prover/bench/cli_bench.h"
#include "prover/bench/known_answer.h"
#include "prover/cli/cli.h"

namespace wipeproof {
namespace {

constexpr char kName[] = "bench";
constexpr int kMinChunks = 3;

}  // namespace

int RunBenchVerify(BenchSetup& setup) {
  setup.threads = 1;
  const KnownAnswer& ka = BenchKnownAnswer(setup.format);
  Status ka_status = CheckKnownAnswerByRecompute(ka, setup.simd);
  if (!ka_status.ok()) return Failure(kName, ka_status);

  uint8_t seed[kSeedBytes];
  for (int i = 0; i < kSeedBytes; ++i) seed[i] = static_cast<uint8_t>(0xC3 ^ i);
  const uint64_t m = setup.chunk_labels;
  using Clock = std::chrono::steady_clock;
  std::vector<double> ms, cpu_ms;
  const auto start = Clock::now();
  for (uint64_t c = 0;; ++c) {
    const auto t0 = Clock::now();
    const double cpu0 = ThreadCpuSeconds();
    auto chunk = RecomputeChunk(setup.format, seed, setup.chunk_labels, c, (c + 1) * m, setup.simd);
    const double cpu1 = ThreadCpuSeconds();
    const auto t1 = Clock::now();
    if (!chunk.ok()) return Failure(kName, chunk.status());
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    cpu_ms.push_back((cpu1 - cpu0) * 1e3);
    if (ms.size() >= kMinChunks && std::chrono::duration<double>(t1 - start).count() >= setup.seconds) break;
  }
  std::vector<double> sorted = ms, sorted_cpu = cpu_ms;
  std::sort(sorted.begin(), sorted.end());
  std::sort(sorted_cpu.begin(), sorted_cpu.end());
  const double median_cpu = sorted_cpu[sorted_cpu.size() / 2];
  double mean = 0;
  for (double x : ms) mean += x / ms.size();
  const double median = sorted[sorted.size() / 2];
  const ChunkCost cost = ChunkCostFor(setup.format, setup.chunk_labels, /*block0_sharing=*/1);
  const double compressions = cost.nodes_hashed * cost.compressions_per_node;

  nlohmann::ordered_json out = BenchHeader("verify", setup);
  out["known_answer"] = {{"case", KnownAnswerName(ka)}, {"sha256", ka.sha256_hex}, {"ok", true}};
  out["chunks"] = ms.size();
  out["ms_per_chunk"] = {{"min", Sig(sorted.front())},
                         {"median", Sig(median)},
                         {"p90", Sig(sorted[sorted.size() * 9 / 10])},
                         {"max", Sig(sorted.back())},
                         {"mean", Sig(mean)}};
  // CPU time of the calling thread per chunk: equals the wall time on an idle core.
  out["cpu_ms_per_chunk"] = {{"min", Sig(sorted_cpu.front())}, {"median", Sig(median_cpu)}};
  out["nodes_hashed_per_chunk"] = cost.nodes_hashed;
  out["compressions_per_chunk"] = Sig(compressions, 6);
  out["compressions_per_s"] = Sig(compressions / (median / 1e3));
  out["compressions_per_cpu_s"] = Sig(compressions / (median_cpu / 1e3));
  if (setup.format == LabelFormat::kC1 && setup.chunk_labels == 16384) {
    out["target_ms_per_chunk"] = kTargetVerifyMs;
    out["meets_target"] = median <= kTargetVerifyMs;
  }
  std::printf("%s\n", out.dump(2).c_str());
  return kExitOk;
}

}  // namespace wipeproof

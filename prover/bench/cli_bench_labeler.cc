// `bench --what=labeler`: the fill rate of a backend's labeler. Repeated fills of whole chunks
// (fresh chunk indices each time) through DeviceMemory::Fill for --seconds, after a warm-up fill
// and the known-answer check on the same memory. Rates count whole chunks only.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "kernels/graph_schedule.h"
#include "prover/cli/cli.h"
#include "prover/bench/cli_bench.h"
#include "prover/cli/cli_flags.h"
#include "prover/bench/known_answer.h"
#include "prover/backends/cpu/locked_memory.h"

namespace wipeproof {
namespace {

constexpr char kName[] = "bench";
constexpr uint64_t kMaxFillBytes = 256ull << 20;  // per timed fill (more when m is large)

}  // namespace

int RunBenchLabeler(BenchSetup& setup) {
  const uint64_t m = setup.chunk_labels;
  const int threads = EffectiveThreads(setup.threads);
  // Two full lane-per-chunk batches (kLanes chunks) per worker per fill, so the labeler runs at
  // full SIMD width and the tail where some workers idle stays small; fewer when m is large.
  const uint64_t chunks_per_fill = std::max<uint64_t>(
      threads, std::min<uint64_t>(2ull * kLanes * threads, kMaxFillBytes / (m * kLabelBytes)));
  const uint64_t labels_per_fill = chunks_per_fill * m;
  const KnownAnswer& ka = BenchKnownAnswer(setup.format);
  uint64_t bytes = std::max(labels_per_fill, ka.count) * kLabelBytes;
  bytes = (bytes + PageBytes() - 1) / PageBytes() * PageBytes();

  AcquireOptions acquire;
  acquire.bytes = bytes;
  auto memory = setup.backend->Acquire(setup.device.id, acquire);
  if (!memory.ok()) return Failure(kName, memory.status());
  FillOptions options;
  options.threads = setup.threads;
  Status ka_status = CheckKnownAnswerOnDevice(**memory, ka, options);
  if (!ka_status.ok()) return Failure(kName, ka_status);

  RegionSpec plan;
  plan.format = setup.format;
  for (int i = 0; i < kSeedBytes; ++i) plan.seed[i] = static_cast<uint8_t>(0x5A ^ i);
  plan.chunk_labels = setup.chunk_labels;
  plan.count = labels_per_fill;
  plan.first = 0;
  Status warm = (*memory)->Fill(plan, options);  // warm-up: caches, schedule, thread start-up
  if (!warm.ok()) return Failure(kName, warm);

  using Clock = std::chrono::steady_clock;
  uint64_t fills = 0;
  const auto start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  double elapsed = 0;
  do {
    plan.first = (fills + 1) * labels_per_fill;
    Status filled = (*memory)->Fill(plan, options);
    if (!filled.ok()) return Failure(kName, filled);
    ++fills;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < setup.seconds);
  const double cpu_s = ProcessCpuSeconds() - cpu_start;

  // The host fill labels units of up to kLanes chunks side by side, about chunks/threads each
  // (kernels/region_labeler.cc).
  const bool host = setup.backend_name == "cpu";
  const int sharing = static_cast<int>(std::min<uint64_t>(kLanes, (chunks_per_fill + threads - 1) / threads));
  const ChunkCost cost = ChunkCostFor(setup.format, setup.chunk_labels, host ? sharing : 0);
  const double labels = static_cast<double>(fills * labels_per_fill);
  const double chunks = static_cast<double>(fills * chunks_per_fill);
  const double node_hashes = chunks * cost.nodes_hashed;
  const double compressions = node_hashes * cost.compressions_per_node;
  const int cores = CoresUsed(setup.threads);

  nlohmann::ordered_json out = BenchHeader("labeler", setup);
  out["known_answer"] = {{"case", KnownAnswerName(ka)}, {"sha256", ka.sha256_hex}, {"ok", true}};
  out["seconds"] = Sig(elapsed, 6);
  out["fills"] = fills;
  out["chunks"] = fills * chunks_per_fill;
  out["labels"] = fills * labels_per_fill;
  out["labels_per_s"] = Sig(labels / elapsed);
  out["bytes_per_s"] = Sig(labels * kLabelBytes / elapsed);
  out["nodes_hashed_per_chunk"] = cost.nodes_hashed;
  out["node_hashes_per_s"] = Sig(node_hashes / elapsed);
  out["compressions_per_node"] = Sig(cost.compressions_per_node);
  out["compressions_per_s"] = Sig(compressions / elapsed);
  if (host) {
    const double per_core = compressions / elapsed / cores;
    out["node_hashes_per_s_per_core"] = Sig(node_hashes / elapsed / cores);
    out["compressions_per_s_per_core"] = Sig(per_core);
    out["target_compressions_per_s_per_core"] = kTargetCompressionsPerCore;
    out["meets_target"] = per_core >= kTargetCompressionsPerCore;
    // What the workers got of their cores (1.0 on an idle machine), and the rate per CPU-second.
    out["cpu_seconds"] = Sig(cpu_s);
    out["cpu_share"] = Sig(cpu_s / (elapsed * cores), 3);
    out["compressions_per_cpu_s"] = Sig(compressions / cpu_s);
  }
  const std::string details = (*memory)->FillDetailsJson();
  (*memory)->Release();
  AddBackendFigures(setup, details, compressions / elapsed, &out);
  std::printf("%s\n", out.dump(2).c_str());
  return kExitOk;
}

}  // namespace wipeproof

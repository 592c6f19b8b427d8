// `bench --what=fill`: what a wipe does to one device. Acquire --gib (or all available minus
// --reserve_gib), check the known answer on that memory, fill it with whole chunks of a fresh
// random seed, then spot-check --samples random chunks: each recomputed with RecomputeChunk (the
// challenger's path) and compared label by label with what the device returns.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include <sodium.h>

#include "common/hex.h"
#include "kernels/chunk_verifier.h"
#include "kernels/graph_schedule.h"
#include "prover/cli/cli.h"
#include "prover/bench/cli_bench.h"
#include "prover/cli/cli_flags.h"
#include "prover/bench/known_answer.h"
#include "common/progress_line.h"
#include "common/numbers.h"

namespace wipeproof {
namespace {

constexpr char kName[] = "bench";
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Recomputes chunk `c` and compares it with the device's labels.
// Errors: DATA_LOSS naming the first wrong label, expected and got.
Status CheckChunk(const DeviceMemory& memory, const RegionSpec& plan, uint64_t c, uint64_t* labels_checked) {
  const uint64_t end = plan.first + plan.count;
  WP_ASSIGN_OR_RETURN(ChunkOutputs expected, RecomputeChunk(plan.format, plan.seed, plan.chunk_labels, c, end));
  const uint64_t lo = std::max(plan.first, expected.first_label);
  const uint64_t hi = std::min(end, expected.first_label + expected.graph_labels);
  std::vector<uint64_t> indices;
  for (uint64_t g = lo; g < hi; ++g) indices.push_back(g);
  std::vector<uint8_t> got(indices.size() * kLabelBytes);
  WP_RETURN_IF_ERROR(memory.Lookup(indices.data(), indices.size(), got.data()));
  for (size_t i = 0; i < indices.size(); ++i) {
    const uint8_t* want = expected.labels.data() + (indices[i] - expected.first_label) * kLabelBytes;
    if (std::memcmp(want, got.data() + i * kLabelBytes, kLabelBytes) != 0) {
      return DataLossError("label " + std::to_string(indices[i]) + " on " + memory.device().id + ": expected " +
                           HexEncode(want, kLabelBytes) + ", got " + HexEncode(got.data() + i * kLabelBytes, kLabelBytes));
    }
  }
  *labels_checked += indices.size();
  return Status::Ok();
}

}  // namespace

int RunBenchFill(BenchSetup& setup) {
  if (!(FLAGS_gib >= 0) || !(FLAGS_reserve_gib >= 0)) return UsageError(kName, "--gib and --reserve_gib must be >= 0");
  auto progress_wanted = ProgressFromFlag();
  if (!progress_wanted.ok()) return UsageError(kName, progress_wanted.status().message());
  AcquireOptions acquire;
  acquire.bytes = static_cast<uint64_t>(std::floor(FLAGS_gib * kGiB));
  acquire.reserve_bytes = static_cast<uint64_t>(std::floor(FLAGS_reserve_gib * kGiB));
  if (FLAGS_gib > 0 && acquire.bytes == 0) return UsageError(kName, "--gib is too small");

  auto t0 = Clock::now();
  auto memory = setup.backend->Acquire(setup.device.id, acquire);
  if (!memory.ok()) return Failure(kName, memory.status());
  const double acquire_s = Since(t0);
  DeviceMemory& mem = **memory;

  FillOptions options;
  options.threads = setup.threads;
  const KnownAnswer& ka = BenchKnownAnswer(setup.format);
  if (mem.label_capacity() < ka.count) {
    return UsageError(kName, "--gib must allow at least " + std::to_string(ka.count * kLabelBytes) +
                                 " bytes for the known-answer check");
  }
  Status ka_status = CheckKnownAnswerOnDevice(mem, ka, options);
  if (!ka_status.ok()) return Failure(kName, ka_status);

  // Whole chunks only (a 192 session covers whole chunks; c1 does too here, for equal rates).
  RegionSpec plan;
  plan.format = setup.format;
  randombytes_buf(plan.seed, kSeedBytes);
  plan.chunk_labels = setup.chunk_labels;
  plan.first = 0;
  plan.count = mem.label_capacity() / plan.chunk_labels * plan.chunk_labels;
  if (plan.count == 0) {
    return UsageError(kName, "the memory holds fewer than m = " + std::to_string(plan.chunk_labels) + " labels");
  }
  ProgressLine progress("fill", plan.count, *progress_wanted);
  options.progress = [&progress](uint64_t done, uint64_t) { progress.Update(done); };
  t0 = Clock::now();
  const double cpu0 = ProcessCpuSeconds();
  Status filled = mem.Fill(plan, options);
  const double fill_s = Since(t0);
  const double fill_cpu_s = ProcessCpuSeconds() - cpu0;
  progress.Finish();
  if (!filled.ok()) return Failure(kName, filled);
  const uint64_t scratch_after = mem.scratch_bytes();

  // Spot-check distinct random chunks.
  const uint64_t chunks = plan.count / plan.chunk_labels;
  std::set<uint64_t> picked;
  while (picked.size() < std::min<uint64_t>(FLAGS_samples, chunks)) {
    uint64_t r;
    randombytes_buf(&r, sizeof r);
    picked.insert(r % chunks);
  }
  uint64_t labels_checked = 0;
  t0 = Clock::now();
  for (uint64_t c : picked) {
    Status checked = CheckChunk(mem, plan, c, &labels_checked);
    if (!checked.ok()) return Failure(kName, checked);
  }
  const double check_s = Since(t0);
  const uint64_t held = mem.bytes_held();
  const std::string details = mem.FillDetailsJson();
  t0 = Clock::now();
  mem.Release();
  const double release_s = Since(t0);
  // The host fill labels units of up to kLanes chunks side by side (kernels/region_labeler.cc).
  const bool host = setup.backend_name == "cpu";
  const ChunkCost cost = ChunkCostFor(setup.format, setup.chunk_labels, host ? kLanes : 0);
  const double compressions_per_s = static_cast<double>(chunks) * cost.nodes_hashed * cost.compressions_per_node / fill_s;

  const double bytes = static_cast<double>(plan.count) * kLabelBytes;
  nlohmann::ordered_json out = BenchHeader("fill", setup);
  out["known_answer"] = {{"case", KnownAnswerName(ka)}, {"sha256", ka.sha256_hex}, {"ok", true}};
  out["bytes_held"] = held;
  out["bytes_filled"] = plan.count * kLabelBytes;
  out["labels"] = plan.count;
  out["chunks"] = chunks;
  out["acquire_s"] = Sig(acquire_s);
  out["fill_s"] = Sig(fill_s);
  out["fill_gb_per_s"] = Sig(bytes / fill_s / 1e9);
  out["fill_gib_per_s"] = Sig(bytes / fill_s / kGiB);
  out["labels_per_s"] = Sig(plan.count / fill_s);
  out["compressions_per_node"] = Sig(cost.compressions_per_node);
  out["compressions_per_s"] = Sig(compressions_per_s);
  if (host) {
    out["compressions_per_s_per_core"] = Sig(compressions_per_s / CoresUsed(setup.threads));
    // What the fill got of its cores (1.0 on an idle machine).
    out["fill_cpu_seconds"] = Sig(fill_cpu_s);
    out["fill_cpu_share"] = Sig(fill_cpu_s / (fill_s * CoresUsed(setup.threads)), 3);
  }
  out["scratch_bytes_after_fill"] = scratch_after;
  out["check"] = {{"chunks", picked.size()}, {"labels", labels_checked}, {"seconds", Sig(check_s)}, {"ok", true}};
  out["release_s"] = Sig(release_s);
  AddBackendFigures(setup, details, compressions_per_s, &out);
  std::printf("%s\n", out.dump(2).c_str());
  return kExitOk;
}

}  // namespace wipeproof

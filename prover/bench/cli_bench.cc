// `wipeproof-prover bench`: parses the flags into a BenchSetup, builds the backend through the
// factory (a GPU backend that cannot start says "disabled: <reason>") and runs one benchmark.
#include "prover/bench/cli_bench.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>
#include <thread>

#include "kernels/cv0_cache.h"
#include "kernels/graph_metrics.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"

namespace wipeproof {
namespace {

constexpr char kName[] = "bench";

}  // namespace

nlohmann::ordered_json BenchHeader(const char* what, const BenchSetup& setup) {
  nlohmann::ordered_json j;
  j["bench"] = what;
  j["backend"] = setup.backend_name;
  if (setup.backend != nullptr) {
    j["device"] = {{"id", setup.device.id},
                   {"name", setup.device.name},
                   {"total_bytes", setup.device.total_bytes},
                   {"available_bytes", setup.device.available_bytes}};
  }
  j["format"] = LabelFormatName(setup.format);
  j["chunk_labels"] = setup.chunk_labels;
  if (setup.backend_name == "cpu") {
    j["simd"] = SimdLevelName(setup.simd);
    j["simd_width"] = SimdLevelWidth(setup.simd);
    j["threads"] = EffectiveThreads(setup.threads);
    j["cores_used"] = CoresUsed(setup.threads);
  }
  return j;
}

ChunkCost ChunkCostFor(LabelFormat format, uint32_t chunk_labels, int block0_sharing) {
  ChunkCost cost;
  cost.nodes_hashed = ComputeGraphMetrics(chunk_labels).nodes_hashed;
  if (format == LabelFormat::kC1) {
    cost.compressions_per_node = 1;
  } else {
    // Hashed node numbers are (nearly) the prefix [0, nodes_hashed): only copy B's tail is skipped.
    const uint64_t cached = Cv0TableFor(chunk_labels).nodes;
    const uint64_t uncached = cost.nodes_hashed > cached ? cost.nodes_hashed - cached : 0;
    cost.compressions_per_node = 2.0;
    if (block0_sharing > 0) cost.compressions_per_node += static_cast<double>(uncached) / cost.nodes_hashed / block0_sharing;
  }
  return cost;
}

void AddBackendFigures(BenchSetup& setup, const std::string& fill_details_json, double compressions_per_s,
                       nlohmann::ordered_json* out) {
  auto details = nlohmann::ordered_json::parse(fill_details_json, nullptr, /*allow_exceptions=*/false);
  if (details.is_object() && !details.empty()) (*out)["fill_details"] = details;
  auto raw = setup.backend->MeasureCompressionRate(setup.device.id, std::min(1.0, setup.seconds));
  if (raw.ok() && *raw > 0) {
    (*out)["raw_compressions_per_s"] = Sig(*raw);
    (*out)["fraction_of_raw"] = Sig(compressions_per_s / *raw, 3);
  }
}

double ProcessCpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double ThreadCpuSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

double Sig(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  const int e = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x))));
  // Divide by an exact power of ten for large values, so 113700000 prints as such.
  if (e < 0) return std::round(x / std::pow(10.0, -e)) * std::pow(10.0, -e);
  return std::round(x * std::pow(10.0, e)) / std::pow(10.0, e);
}

int CoresUsed(int threads) {
  int hw = EffectiveThreads(0);
  int t = EffectiveThreads(threads);
  return t < hw ? t : hw;
}

int RunBench() {
  BenchSetup setup;
  auto format = FormatFromFlag();
  if (!format.ok()) return UsageError(kName, format.status().message());
  setup.format = *format;
  auto m = ChunkLabelsFromFlag(kBenchDefaultChunkLabels);
  if (!m.ok()) return UsageError(kName, m.status().message());
  setup.chunk_labels = *m;
  auto threads = ThreadsFromFlag();
  if (!threads.ok()) return UsageError(kName, threads.status().message());
  setup.threads = *threads;
  auto simd = SimdFromFlag();
  if (!simd.ok()) return UsageError(kName, simd.status().message());
  setup.simd = *simd;
  if (!(FLAGS_seconds > 0) || FLAGS_seconds > 3600) {
    return UsageError(kName, "--seconds must be in (0, 3600], got " + std::to_string(FLAGS_seconds));
  }
  setup.seconds = FLAGS_seconds;
  setup.backend_name = FLAGS_backend;
  // bench calls the host backend "cpu" (its cores), serve --devices "host" (its memory).
  DeviceKind backend_kind;
  if (FLAGS_backend == "host" || !DeviceKindFromName(FLAGS_backend == "cpu" ? "host" : FLAGS_backend, &backend_kind)) {
    return UsageError(kName, "--backend must be cpu, cuda or hip, got '" + FLAGS_backend + "'");
  }
  if (FLAGS_what != "labeler" && FLAGS_what != "verify" && FLAGS_what != "fill" && FLAGS_what != "all" &&
      FLAGS_what != "rounds") {
    return UsageError(kName, "--what must be labeler, verify, fill, all or rounds, got '" + FLAGS_what + "'");
  }
  if (FLAGS_what == "rounds") {
    // The agent's round path over host memory; no --backend device is involved.
    if (FLAGS_backend != "cpu") return UsageError(kName, "--what=rounds answers from host memory; use --backend=cpu");
    return RunBenchRounds(setup);
  }
  // Every device of every backend this node has (cli_bench_all.cc), whatever --backend says.
  if (FLAGS_what == "all") return RunBenchAll(setup);
  if (FLAGS_what == "verify") {
    // The verifier is the challenger's CPU path; no device is involved.
    if (FLAGS_backend != "cpu") return UsageError(kName, "--what=verify runs on the CPU; use --backend=cpu");
    return RunBenchVerify(setup);
  }

  BackendConfig config;
  config.EnableOnly(backend_kind);
  config.host.simd = setup.simd;
  setup.backends = CreateBackends(config);
  if (setup.backends.backends.empty()) {
    std::string reason = setup.backends.disabled.empty() ? FLAGS_backend + ": disabled: not built"
                                                         : setup.backends.disabled.front();
    return Failure(kName, UnavailableError("backend " + reason));
  }
  setup.backend = setup.backends.backends.front().get();
  std::vector<DeviceInfo> devices = setup.backend->Devices();
  if (devices.empty()) return Failure(kName, UnavailableError("backend " + FLAGS_backend + " has no devices"));
  setup.device = devices.front();
  if (!FLAGS_device.empty()) {
    bool found = false;
    for (const auto& d : devices) {
      if (d.id == FLAGS_device) {
        setup.device = d;
        found = true;
      }
    }
    if (!found) return UsageError(kName, "no " + FLAGS_backend + " device '" + FLAGS_device + "'");
  }
  return FLAGS_what == "labeler" ? RunBenchLabeler(setup) : RunBenchFill(setup);
}

const CliSubcommand& BenchSubcommand() {
  static const CliSubcommand kSubcommand = {
      "bench",
      "measure labeler, verifier or fill rates, the signed node profile, or round latency (JSON on stdout)",
      "--what=labeler: repeated fills of whole chunks through the backend for --seconds; labels/s,\n"
      "  bytes/s, node hashes/s and compressions/s in total and per core.\n"
      "--what=verify: RecomputeChunk (the challenger's check) on one core; ms per chunk.\n"
      "--what=fill: acquire --gib of device memory, fill it, spot-check --samples chunks against\n"
      "  RecomputeChunk; bytes, seconds, GB/s, labels/s.\n"
      "--what=all: the node profile for calibration, on every device of every backend: fill rates at\n"
      "  --fill_chunk_labels, lookup latency percentiles, one-chunk latency, the host core's sequential\n"
      "  compression time, RecomputeChunk per m; JSON on stdout, signed with --node_key into --out.\n"
      "--what=rounds: --rounds rounds of --lookup_labels labels against the real agent (host memory,\n"
      "  keys made for the run) on each of --paths (in-process, tcp-loopback-plaintext,\n"
      "  tcp-loopback-tls13; the same three as channel-*, rounds on a round channel; and the floors\n"
      "  floor-raw-in-process, floor-in-process, floor-tcp-loopback-plaintext, floor-tcp-loopback-tls13,\n"
      "  floor-blocking-in-process, floor-blocking-tcp-loopback-plaintext,\n"
      "  floor-blocking-tcp-loopback-tls13; --lookup_labels in [1, 4096]):\n"
      "  round time percentiles, where the time goes (agent checks, lookups,\n"
      "  transport, client build and check, the transcript hash after the answer) and instructions\n"
      "  per round where the machine counts them; one JSON line per path. The floor-* paths send the\n"
      "  same messages as flat Cap'n Proto on the same streams, without the RPC system or the agent\n"
      "  (floor-raw-in-process: their bytes alone on a blocking socketpair), what the transport alone\n"
      "  costs here. The TCP paths' agent runs\n"
      "  serve's event loop, polling during rounds as --round_polling says (auto|on|off); every path's\n"
      "  agent hashes its transcript as --transcript_thread says (auto|on|off). m is 256\n"
      "  (the round time does not depend on it; --chunk_labels is not used).\n"
      "Every run first checks the SHA-256 of a labels-public.json case computed by the same path and\n"
      "prints no rates when it does not match (exit 1). A backend that cannot start exits 3 with\n"
      "\"disabled: <reason>\". docs/benchmarks.md explains the fields.",
      {"what",
       "backend",
       "device",
       "format",
       "chunk_labels",
       "seconds",
       "threads",
       "simd",
       "gib",
       "reserve_gib",
       "samples",
       "progress",
       "fill_chunk_labels",
       "fill_gib",
       "lookup_labels",
       "lookup_samples",
       "rounds",
       "paths",
       "round_polling",
       "transcript_thread",
       "node_key",
       "out"},
      &RunBench,
      {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576]", "16384"},
       {"out", "--what=all: the file the signed node profile is written to (with --node_key)"},
       {"node_key", "--what=all: this node's secret key file (PREFIX.key, mode 0600) that signs the node profile"}}};
  return kSubcommand;
}

}  // namespace wipeproof

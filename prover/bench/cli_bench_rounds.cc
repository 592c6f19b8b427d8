// `wipeproof-prover bench --what=rounds`: the round benchmark (round_bench.h), one JSON line per
// path on stdout (docs/benchmarks.md "Rounds" explains the fields), progress on stderr.
#include <gflags/gflags.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "prover/bench/cli_bench.h"
#include "prover/bench/round_bench.h"
#include "prover/bench/round_floor.h"
#include "prover/bench/round_floor_blocking.h"
#include "prover/cli/cli.h"

DEFINE_uint32(rounds, 2000, "bench --what=rounds: timed rounds per path, in [1, 1000000]; default 2000");
DEFINE_string(paths, wipeproof::kRoundBenchPaths,
              "bench --what=rounds: the paths to measure, comma-separated, in order (channel-*: the rounds on a "
              "round channel; floor-*: the same messages without the RPC system and without the agent)");
DECLARE_uint32(lookup_labels);
DECLARE_string(round_polling);      // serve's (prover/cli/cli_serve.cc): the TCP paths' agent runs as serve
DECLARE_string(transcript_thread);  // serve's too: every path's agent hashes its transcript as serve would

namespace wipeproof {
namespace {

constexpr char kName[] = "bench";

nlohmann::ordered_json Json(const Percentiles& p, bool all) {
  nlohmann::ordered_json j;
  j["p50_us"] = Sig(p.p50_us, 3);
  j["p99_us"] = Sig(p.p99_us, 3);
  if (all) {
    j["p999_us"] = Sig(p.p999_us, 3);
    j["max_us"] = Sig(p.max_us, 3);
  }
  return j;
}

}  // namespace

int RunBenchRounds(BenchSetup& setup) {
  RoundBenchOptions options;
  options.rounds = FLAGS_rounds;
  options.labels_per_round = FLAGS_lookup_labels;
  SpareCoreMode polling_mode;
  if (!SpareCoreModeFromName(FLAGS_round_polling, &polling_mode)) {
    return UsageError(kName, "--round_polling must be auto, on or off, got '" + FLAGS_round_polling + "'");
  }
  SpareCoreMode transcript_mode;
  if (!SpareCoreModeFromName(FLAGS_transcript_thread, &transcript_mode)) {
    return UsageError(kName, "--transcript_thread must be auto, on or off, got '" + FLAGS_transcript_thread + "'");
  }
  // The flags' own words before anything runs (RunRoundBench checks the same, in its terms).
  if (FLAGS_rounds < 1 || FLAGS_rounds > 1'000'000) {
    return UsageError(kName, "--rounds must be in [1, 1000000], got " + std::to_string(FLAGS_rounds));
  }
  if (FLAGS_lookup_labels < 1 || FLAGS_lookup_labels > 4096) {
    return UsageError(
        kName, "--what=rounds: --lookup_labels must be in [1, 4096], got " + std::to_string(FLAGS_lookup_labels));
  }
  options.polling.enabled = SpareCoreEnabled(polling_mode, UsableHardwareThreads());
  options.transcript_thread = SpareCoreEnabled(transcript_mode, UsableHardwareThreads());
  options.paths.clear();
  std::stringstream paths(FLAGS_paths);
  for (std::string path; std::getline(paths, path, ',');) {
    if (path.empty()) continue;
    if (!IsRoundBenchPath(path)) {
      return UsageError(kName, "--paths: unknown path '" + path + "' (known: " + kRoundBenchPaths + ")");
    }
    options.paths.push_back(path);
  }
  if (options.paths.empty()) return UsageError(kName, "--paths names no path");
  std::fprintf(stderr, "bench rounds: %u rounds of %u labels per path (%s), host memory of %llu labels\n",
               options.rounds, options.labels_per_round, FLAGS_paths.c_str(),
               static_cast<unsigned long long>(options.session_labels));
  const double cpu_before = ProcessCpuSeconds();
  auto results = RunRoundBench(options);
  if (!results.ok()) {
    if (results.status().code() == StatusCode::kInvalidArgument) return UsageError(kName, results.status().message());
    return Failure(kName, results.status());
  }
  setup.chunk_labels = options.chunk_labels;
  for (const RoundPathResult& r : *results) {
    nlohmann::ordered_json j = BenchHeader("rounds", setup);
    j["path"] = r.path;
    const bool floor = IsRoundFloorPath(r.path) || IsBlockingFloorPath(r.path);
    const bool one_thread = r.path == "in-process" || r.path == "channel-in-process" || r.path == "floor-in-process" ||
                            r.path == "floor-raw-in-process";
    if (!one_thread && !floor) j["round_polling"] = options.polling.enabled;
    if (!floor) j["transcript_thread"] = options.transcript_thread;
    if (floor) {
      j["floor"] = r.path == "floor-raw-in-process"
                       ? "the two messages' byte counts on a blocking socketpair, one thread: no event loop, no "
                         "serialization, no agent"
                   : IsBlockingFloorPath(r.path)
                       ? "the same messages, flat Cap'n Proto between two threads blocking on their sockets: no "
                         "event loop, no RPC system, no agent"
                       : "the same messages, flat Cap'n Proto on the stream, no RPC system, no agent";
    }
    j["labels_per_round"] = r.labels_per_round;
    j["rounds"] = r.rounds;
    j["p50_us"] = Sig(r.round.p50_us, 3);
    j["p99_us"] = Sig(r.round.p99_us, 3);
    j["p999_us"] = Sig(r.round.p999_us, 3);
    j["max_us"] = Sig(r.round.max_us, 3);
    const std::array<double, 3>& load = r.load_average;  // as this path started
    j["load_average"] = {Sig(load[0], 3), Sig(load[1], 3), Sig(load[2], 3)};
    nlohmann::ordered_json stages;
    if (r.path != "floor-raw-in-process") stages["client_build"] = Json(r.client_build, false);  // (it builds none)
    if (!floor) {
      stages["agent_checks"] = Json(r.agent_checks, false);
      stages["agent_lookups"] = Json(r.agent_lookups, false);
      stages["agent_answer"] = Json(r.agent_answer, true);
    }
    stages["transport"] = Json(r.transport, true);
    if (!floor) {
      stages["client_check"] = Json(r.client_check, false);
      stages["agent_transcript_after_answer"] = Json(r.agent_transcript, false);
    }
    j["stages"] = stages;
    nlohmann::ordered_json cpu;
    cpu[one_thread ? "one_thread_both_sides" : "client_thread"] = Sig(r.client_cpu_us, 3);
    if (r.agent_cpu_us >= 0) cpu[floor ? "echo_thread" : "agent_thread"] = Sig(r.agent_cpu_us, 3);
    j["cpu_us_per_round"] = cpu;
    if (r.client_instructions >= 0) {
      nlohmann::ordered_json counts;
      counts[one_thread ? "one_thread_both_sides" : "client_thread"] = Sig(r.client_instructions, 4);
      if (r.agent_instructions >= 0) counts["agent_thread"] = Sig(r.agent_instructions, 4);
      j["instructions_per_round"] = counts;
    } else {
      j["instructions_per_round"] = nullptr;
      j["instructions_unavailable"] = r.instructions_unavailable;
    }
    if (r.tls_handshake_p50_us >= 0) j["tls_handshake_p50_us"] = Sig(r.tls_handshake_p50_us, 3);
    std::printf("%s\n", j.dump().c_str());
  }
  std::fprintf(stderr, "bench rounds: done, %.1f CPU-seconds in all\n", ProcessCpuSeconds() - cpu_before);
  return 0;
}

}  // namespace wipeproof

// wipeproof-prover: `wipeproof-prover <labels|graph-info|bench|keygen|serve|doctor> [flags]` (cli.h). Picks the
// subcommand, answers --help with that subcommand's flags only, parses flags with gflags, rejects
// flags that do not apply, and runs it.
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <sodium.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/terminal_text.h"
#include "proto/wipe.capnp.h"
#include "prover/bench/cli_bench.h"
#include "prover/cli/cli.h"
#include "prover/cli/cli_flags.h"
#include "prover/cli/serve_flags.h"

namespace wipeproof {
namespace {

constexpr char kProgram[] = "wipeproof-prover";
// --progress as serve (and doctor, which takes serve's flags) reads it.
constexpr char kServeProgressHelp[] =
    "fill progress lines in the agent's log: auto (default) once a fill runs 2 s, terminal or not (a "
    "service's journal), always from the start, never";

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: %s <", kProgram);
  const auto& subs = Subcommands();
  for (size_t i = 0; i < subs.size(); ++i) std::fprintf(out, "%s%s", i ? "|" : "", subs[i].name);
  std::fprintf(out, "> [flags]\n\n");
  for (const auto& s : subs) std::fprintf(out, "  %-11s %s\n", s.name, s.synopsis);
  std::fprintf(out, "\n`%s <subcommand> --help` lists the subcommand's flags.\n\n%s", kProgram, CliExitCodeTable());
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitUsage;
  }
  if (IsCliVersionFlag(argv[1])) {
    PrintCliVersion(kProgram, proto::PROTOCOL_VERSION);
    return kExitOk;
  }
  if (std::strcmp(argv[1], "help") == 0 && argc > 2) {
    // `help SUB` is `SUB --help`: that subcommand's help. No subcommand has subcommands of its own:
    // another word (not a flag) after it is a usage error.
    const bool known = std::any_of(Subcommands().begin(), Subcommands().end(),
                                   [&](const Subcommand& s) { return s.name == std::string(argv[2]); });
    if (known && argc > 3 && argv[3][0] != '-') {
      std::fprintf(stderr, "%s %s: unknown subcommand '%s' (%s has none; see %s %s --help)\n", kProgram, argv[2],
                   TerminalSafe(argv[3]).c_str(), argv[2], kProgram, argv[2]);
      return kExitUsage;
    }
    char help_flag[] = "--help";
    char* args[] = {argv[0], argv[2], help_flag, nullptr};
    return Main(3, args);
  }
  if (IsCliHelpFlag(argv[1]) || std::strcmp(argv[1], "help") == 0) {
    PrintUsage(stdout);
    return kExitOk;
  }
  const Subcommand* sub = nullptr;
  for (const auto& s : Subcommands()) {
    if (s.name == std::string(argv[1])) sub = &s;
  }
  if (sub == nullptr) {  // one line, as every error
    std::fprintf(stderr, "%s: unknown subcommand '%s' (see %s --help)\n", kProgram, TerminalSafe(argv[1]).c_str(),
                 kProgram);
    return kExitUsage;
  }
  for (int i = 2; i < argc; ++i) {
    if (IsCliHelpFlag(argv[i])) {
      PrintCliSubcommandHelp(kProgram, *sub);
      return kExitOk;
    }
  }
  FLAGS_logtostderr = true;  // no log files; defaults that the command line may still override
  // The agent logs its phases and timings (INFO); one-shot commands only warnings and errors.
  FLAGS_minloglevel = std::string(sub->name) == "serve" ? google::GLOG_INFO : google::GLOG_WARNING;
  // doctor prints its own verdicts; a GPU runtime's start-up warnings would only repeat them.
  if (std::string(sub->name) == "doctor") FLAGS_minloglevel = google::GLOG_ERROR;
  const std::string bad = ParseCliSubcommandFlags(kProgram, *sub, argc, argv,
                                                  {"prover/cli/cli_flags.cc", "prover/bench/cli_bench_all.cc",
                                                   "prover/cli/cli_keygen.cc", "prover/cli/cli_serve.cc",
                                                   "prover/cli/cli_doctor.cc"});
  if (!bad.empty()) return UsageError(sub->name, bad);
  google::InitGoogleLogging(argv[0]);
  if (sodium_init() < 0) return Failure(sub->name, InternalError("libsodium failed to initialise"));
  return sub->run();
}

}  // namespace

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      {"labels",
       "print the labels of a global index range (one hex label per line, or their SHA-256)",
       "Computes labels g = first .. first+count-1 of one session (label-spec.md) on all cores and prints\n"
       "each as 64 lowercase hex digits on its own line, or with --sha256 only the SHA-256 of the\n"
       "labels concatenated (the known-answer format of labels-public.json). For posedb-blake3-192 the\n"
       "range is one region (its trailing partial chunk is the graph for m' = its size). Large ranges\n"
       "are computed in chunk-aligned pieces, so memory stays bounded (~64 MiB + one chunk per thread).",
       {"format", "seed", "chunk_labels", "first", "count", "sha256", "threads", "simd", "progress"},
       &RunLabels,
       {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576] (required)"},
        {"seed", "session seed: 64 hex digits (32 bytes) (required)"},
        {"count", "number of labels, >= 1 (required)"}}},
      {"graph-info",
       "print the metrics of the graph for m as JSON (label-spec.md §3 table)",
       "Replays the graph schedule for m outputs and prints: nodes, nodes_per_output, nodes_hashed,\n"
       "min/max output depth, peak live labels (the labeler's scratch) and schedule size. m = 2^17\n"
       "takes about a second.",
       {"chunk_labels"},
       &RunGraphInfo,
       {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576] (required)"}}},
      {"bench",
       "measure labeler, verifier or fill rates, or the signed node profile (JSON on stdout)",
       "--what=labeler: repeated fills of whole chunks through the backend for --seconds; labels/s,\n"
       "  bytes/s, node hashes/s and compressions/s in total and per core.\n"
       "--what=verify: RecomputeChunk (the challenger's check) on one core; ms per chunk.\n"
       "--what=fill: acquire --gib of device memory, fill it, spot-check --samples chunks against\n"
       "  RecomputeChunk; bytes, seconds, GB/s, labels/s.\n"
       "--what=all: the node profile for calibration, on every device of every backend: fill rates at\n"
       "  --fill_chunk_labels, lookup latency percentiles, one-chunk latency, the host core's sequential\n"
       "  compression time, RecomputeChunk per m; JSON on stdout, signed with --node_key into --out.\n"
       "Every run first checks the SHA-256 of a labels-public.json case computed by the same path and\n"
       "prints no rates when it does not match (exit 1). A backend that cannot start exits 3 with\n"
       "\"disabled: <reason>\". docs/benchmarks.md explains the fields.",
       {"what", "backend", "device", "format", "chunk_labels", "seconds", "threads", "simd", "gib", "reserve_gib",
        "samples", "progress", "fill_chunk_labels", "fill_gib", "lookup_labels", "lookup_samples", "node_key", "out"},
       &RunBench,
       {{"chunk_labels", "m, labels per chunk (graph outputs), in [1, 1048576]", "16384"},
        {"out", "--what=all: the file the signed node profile is written to (with --node_key)"},
        {"node_key", "--what=all: this node's secret key file (PREFIX.key, mode 0600) that signs the node profile"}}},
      {"keygen",
       "write this node's Ed25519 key pair and certificate: PREFIX.key (0600), PREFIX.pub, PREFIX.crt",
       "Writes a fresh key pair as PREFIX.key (secret, mode 0600) and PREFIX.pub (public), and the key's\n"
       "TLS certificate as PREFIX.crt (a pure function of the key: proto/tls_certificate.h), and prints\n"
       "secret-key-file, public-key-file, certificate-file, key-id and public-key as \"name: value\"\n"
       "lines for the challenger's inventory. Refuses to overwrite existing files unless --force.\n"
       "--certificate_only writes PREFIX.crt of the existing PREFIX.key (a key made before certificates).",
       {"out", "force", "certificate_only"},
       &RunKeygen,
       {{"out", "path prefix of the key files: writes PREFIX.key (0600), PREFIX.pub and PREFIX.crt (required)"}}},
      {"serve",
       "run the prover agent: accept signed wipe orders over TCP, fill, answer rounds",
       "Listens on --listen and serves the ProverAgent RPC (proto/wipe.capnp) until SIGINT/SIGTERM.\n"
       "Accepts an order only if it verifies under --authority_key, names --node_name and this node's\n"
       "key, is unexpired (within --clock_skew_us), has an unseen session id, and plans exactly this\n"
       "node's devices with sizes it can hold; then fills all devices at once, reports, answers rounds\n"
       "and frees all memory after the verdict (--challenger_key), on abort, on disconnect, or after the\n"
       "session timeout. Every connection is TLS 1.3 with both sides authenticated: the agent presents\n"
       "the certificate of --node_key and accepts only the client holding the key of --challenger_cert\n"
       "(which must carry --challenger_key); orders are accepted only from the challenger they name.\n"
       "Prints \"listening on HOST:PORT\" on stdout once bound (port 0: any free port); logs phases and\n"
       "timings on stderr. The node key file must be mode 0600. --metrics_listen=HOST:PORT serves Prometheus\n"
       "metrics on /metrics and /healthz (docs/metrics.md) and prints \"metrics on HOST:PORT\" once bound.\n"
       "--progress logs each device's fill progress (bytes, rate, ETA): auto (default) once a fill runs 2 s,\n"
       "always from the start, never. `doctor` checks a node with the same flags before a wipe.",
       ServeFlagNames(),
       &RunServe,
       {{"node_key",
         "this node's secret key file (PREFIX.key, mode 0600): signs reports and is the agent's TLS identity "
         "(required)"},
        {"progress", kServeProgressHelp}}},
      {"doctor",
       "check what this node needs before a wipe can run (table, or JSON with --json)",
       "Takes the same flags as serve and checks what serve would use: GPU devices and their memory\n"
       "(and the runtimes looked for), MIG or partition mode (nvidia-smi / rocm-smi), other processes\n"
       "holding GPU memory, the host budget against physical memory and MemAvailable, RLIMIT_MEMLOCK\n"
       "(the check serve makes at start-up), clock synchronisation (timedatectl, adjtimex), the key\n"
       "files and their modes, and whether --listen (and --metrics_listen) can be bound. Prints one row\n"
       "per check, OK, WARN or FAIL, with a fix for each FAIL; --json prints {\"wipe_can_run\", \"checks\"}.\n"
       "Exit status: 0 when a wipe can run (WARNs allowed), 1 when any check FAILs, 2 for a bad command line.",
       DoctorFlagNames(),
       &RunDoctor,
       {{"node_key", "this node's secret key file (PREFIX.key, mode 0600), as serve would use it"},
        {"progress", "serve's fill progress (serve --help); accepted so doctor takes serve's flags as they are"}},
       "serve"},
  };
  return kSubcommands;
}

int UsageError(const char* subcommand, const std::string& message) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, subcommand, TerminalSafe(message).c_str());
  return kExitUsage;
}

int Failure(const char* subcommand, const Status& status) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, subcommand, CliErrorText(status).c_str());
  return CliExitCodeFor(status);
}

}  // namespace wipeproof

int main(int argc, char** argv) { return wipeproof::Main(argc, argv); }

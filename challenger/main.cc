// wipeproof-challenger: `wipeproof-challenger <keygen|wipe|serve|ledger> [flags]` (cli.h). Picks the
// subcommand; `ledger` is handed its argv untouched (cli_ledger.h parses its own flags); the others
// answer --help with their own flags, parse flags with gflags, reject flags that do not apply, and
// run.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "challenger/cli/cli.h"
#include "challenger/cli/cli_calibration_flags.h"
#include "challenger/cli/cli_flags.h"
#include "challenger/cli/cli_ledger.h"
#include "challenger/cli/cli_selftest.h"
#include "common/terminal_text.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {
namespace {

constexpr char kProgram[] = "wipeproof-challenger";
// --challenger_key as wipe, serve and calibrate read it: none runs without it.
constexpr char kChallengerKeyHelp[] =
    "challenger secret key file (PREFIX-challenger.key, mode 0600): signs verdicts, receipts and ledger entries, "
    "and is the challenger's TLS identity (required)";

void PrintUsage(FILE* out) {
  std::fprintf(out, "usage: %s <keygen|sign|wipe|serve|calibrate|plan|status|ledger|selftest> [flags]\n\n", kProgram);
  for (const auto& s : ChallengerSubcommands()) std::fprintf(out, "  %-9s %s\n", s.name, s.synopsis);
  std::fprintf(out, "  %-9s %s\n", "ledger", "show, verify, export, audit or decode the ledger (`ledger --help`)");
  std::fprintf(out, "  %-9s %s\n", "selftest", "run the honest agent and adversaries in process (`selftest --help`)");
  std::fprintf(out, "\n`%s <subcommand> --help` lists the subcommand's flags.\n\n%s", kProgram, CliExitCodeTable());
}

// A subcommand of this binary: ledger, selftest, or one of ChallengerSubcommands.
bool IsChallengerSubcommand(const char* name) {
  if (std::strcmp(name, "ledger") == 0 || std::strcmp(name, "selftest") == 0) return true;
  for (const auto& s : ChallengerSubcommands()) {
    if (s.name == std::string(name)) return true;
  }
  return false;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    PrintUsage(stderr);
    return kExitConfig;
  }
  if (IsCliVersionFlag(argv[1])) {
    PrintCliVersion(kProgram, proto::PROTOCOL_VERSION);
    return kExitPass;
  }
  if (std::strcmp(argv[1], "help") == 0 && argc > 2) {
    // `help SUB [...]` is `SUB --help`: that subcommand's help (ledger: `help ledger verify` too). Only
    // ledger has subcommands of its own: another word (not a flag) after another SUB is a usage error.
    if (argc > 3 && argv[3][0] != '-' && std::strcmp(argv[2], "ledger") != 0 && IsChallengerSubcommand(argv[2])) {
      std::fprintf(stderr, "%s %s: unknown subcommand '%s' (%s has none; see %s %s --help)\n", kProgram, argv[2],
                   TerminalSafe(argv[3]).c_str(), argv[2], kProgram, argv[2]);
      return kExitConfig;
    }
    std::vector<char*> args{argv[0]};
    for (int i = 2; i < argc; ++i) args.push_back(argv[i]);
    char help_flag[] = "--help";
    args.push_back(help_flag);
    args.push_back(nullptr);
    return Main(static_cast<int>(args.size()) - 1, args.data());
  }
  if (IsCliHelpFlag(argv[1]) || std::strcmp(argv[1], "help") == 0) {
    PrintUsage(stdout);
    return kExitPass;
  }
  if (std::strcmp(argv[1], "ledger") == 0) return RunLedgerCommand(argc, argv);
  if (std::strcmp(argv[1], "selftest") == 0) return RunSelftestCommand(argc, argv);
  const ChallengerSubcommand* sub = nullptr;
  for (const auto& s : ChallengerSubcommands()) {
    if (s.name == std::string(argv[1])) sub = &s;
  }
  if (sub == nullptr) {  // one line, as every error
    std::fprintf(stderr, "%s: unknown subcommand '%s' (see %s --help)\n", kProgram, TerminalSafe(argv[1]).c_str(),
                 kProgram);
    return kExitConfig;
  }
  for (int i = 2; i < argc; ++i) {
    if (IsCliHelpFlag(argv[i])) {
      PrintCliSubcommandHelp(kProgram, *sub);
      return kExitPass;
    }
  }
  FLAGS_logtostderr = true;
  FLAGS_minloglevel = google::GLOG_WARNING;
  const std::string bad =
      ParseCliSubcommandFlags(kProgram, *sub, argc, argv, {"challenger/cli/cli_flags.cc", kCalibrationFlagsFile});
  if (!bad.empty()) return ConfigError(sub->name, bad);
  google::InitGoogleLogging(argv[0]);
  Status sodium = proto::InitSodium();
  if (!sodium.ok()) return ConfigError(sub->name, sodium);
  return sub->run();
}

}  // namespace

const std::vector<ChallengerSubcommand>& ChallengerSubcommands() {
  static const std::vector<ChallengerSubcommand> kSubcommands = {
      {"keygen",
       "write the authority and challenger key pairs, and the challenger's certificate",
       "Writes PREFIX-authority.key/.pub (signs wipe orders) and PREFIX-challenger.key/.pub (signs\n"
       "verdicts, receipts and ledger entries, and authenticates the challenger to agents over TLS),\n"
       "and PREFIX-challenger.crt, the certificate of the challenger key (proto/tls_certificate.h).\n"
       "Secret files get mode 0600, public ones 0644; existing files are kept unless --overwrite. Copy\n"
       "both .pub files and the .crt to every node's agent (serve --challenger_cert pins it); the\n"
       "challenger's .pub is also what auditors need for `ledger verify`. Prints the key ids.",
       {"out", "overwrite"},
       &RunKeygen,
       {{"out",
         "path prefix: writes PREFIX-authority.key/.pub, PREFIX-challenger.key/.pub and PREFIX-challenger.crt "
         "(required)"}}},
      {"sign",
       "the authority signs a parameter profile or an adversary-class file",
       "Signs --in (a parameter profile with --what=profile, an adversary-class file with --what=classes) with\n"
       "the authority key and writes the signed document to --out: the text is kept byte for byte and an\n"
       "Ed25519 signature over it added (proto/signed_document.h). wipe and serve verify both under the\n"
       "authority key; a verdict states a bound only under a signed profile whose class, t_min and safety\n"
       "factor are those of the signed class file. The input is checked first: a document that would not\n"
       "load is refused. calibrate signs the profiles it writes itself.",
       {"what", "in", "out", "authority_key"},
       &RunSign,
       {{"what", "what --in is: profile (a parameter profile) or classes (an adversary-class file) (required)"},
        {"in", "the document to sign (JSON, as written by hand or by `calibrate`) (required)"},
        {"out", "the signed document to write (required)"},
        {"authority_key", "authority secret key file (PREFIX-authority.key, mode 0600) that signs --in (required)"}}},
      {"wipe",
       "run one wipe session with one node over TCP and print its verdict",
       "Plans the node's devices from the inventory and the profile, sends the signed order, times the\n"
       "fill and R challenge rounds, checks every label, signs the verdict, collects the agent's signed\n"
       "transcript and records everything in the ledger. Prints a summary (stdout), or with --json the\n"
       "verdict as JSON (stdout) and the summary on stderr. Exit 0 pass, 1 fail (or not fully recorded),\n"
       "2 no session ran (bad input), 3 the node was busy with another session or the environment stopped\n"
       "the session (the table: wipeproof-challenger --help). A lone node of a larger wave is wiped without its "
       "neighbours: its verdict says\n"
       "the wave-complete assumption did not hold (use serve, or a wave of one node). A bound is stated only\n"
       "under a calibrated profile signed by the authority key whose class is that of --classes, also signed.",
       {"node", "inventory", "authority_key", "challenger_key", "ledger", "profile", "classes", "threads", "json",
        "connect_timeout_s", "progress"},
       &RunWipe,
       {{"node", "inventory name of the node to wipe (required)"},
        {"authority_key",
         "authority secret key file (PREFIX-authority.key, mode 0600): signs the order; --profile and --classes are "
         "verified under its public half (required)"},
        {"challenger_key", kChallengerKeyHelp},
        {"ledger", "ledger database file (SQLite) the session is recorded in; created if absent (required)"},
        {"json", "print the verdict as one JSON object on stdout (the summary goes to stderr)"}}},
      {"serve",
       "run the inventory's wave schedule: periodic wipes with random jitter",
       "Every wave runs on its own schedule: first after a uniform delay in [0, period], then every\n"
       "period - jitter + U[0, 2*jitter] seconds (libsodium CSPRNG), so a node cannot predict its next\n"
       "wipe. All nodes of a wave are wiped at once and kept in step: no node's rounds start before every\n"
       "node of the wave has filled, and none releases its memory before all rounds of the wave ended.\n"
       "Stops on SIGINT/SIGTERM after the running wave, after --max_sessions, or with --once after one\n"
       "run of every wave (started immediately). Exit 0 if every session passed, 1 if any failed.\n"
       "--metrics_listen=HOST:PORT serves Prometheus metrics on /metrics and /healthz (docs/metrics.md).",
       {"inventory", "authority_key", "challenger_key", "ledger", "profile", "classes", "threads", "json",
        "connect_timeout_s", "wave", "max_sessions", "once", "metrics_listen", "shard", "progress"},
       &RunServe,
       {{"authority_key",
         "authority secret key file (PREFIX-authority.key, mode 0600): signs the order; --profile and --classes are "
         "verified under its public half (required)"},
        {"challenger_key", kChallengerKeyHelp},
        {"ledger", "ledger database file (SQLite) every session is recorded in; created if absent (required)"},
        {"json", "print each verdict as one JSON object on stdout (the summaries go to stderr)"}}},
      {"calibrate",
       "measure a node over the real path and write a calibrated parameter profile",
       "Runs two probe sessions against the node (docs/calibration.md): a round probe (the node's whole\n"
       "declared memory at a small m, --probe_rounds rounds of --labels_per_round labels per device) whose\n"
       "round times on the challenger's monotonic clock give the honest p99.9; then, at the m the deadline\n"
       "rule picks for --class, a fill probe whose fill time (order sent to report received) sets the fill\n"
       "deadline. deadline = p99.9 * (1 + --margin); m = the smallest power of two with\n"
       "1.5*m*c_node*t_min/safety >= deadline; R and labels per round from --target_fraction and\n"
       "--confidence for the node statement (all planned devices together); fill deadline = measured fill *\n"
       "(1 + --fill_slack), at least 1.2 x the measured fill. The node's signed profile (--node_profile,\n"
       "verified under the inventory's node key) can only make parameters stricter. Writes --out, signed\n"
       "by --authority_key, only on success. Exit 0 written, 1 refused (no m up to --max_chunk_labels fits,\n"
       "the planned statement misses --target_fraction, the class's safety factor is below 1.5, the node is\n"
       "too slow, or a probe failed: nothing written, the reason on stderr), 2 bad command line or\n"
       "configuration.",
       {"node",
        "inventory",
        "authority_key",
        "challenger_key",
        "out",
        "class",
        "classes",
        "format",
        "margin",
        "fill_slack",
        "target_fraction",
        "confidence",
        "labels_per_round",
        "max_chunk_labels",
        "max_fill_s",
        "node_profile",
        "probe_chunk_labels",
        "probe_rounds",
        "probe_round_deadline_us",
        "probe_fill_deadline_s",
        "name",
        "ledger",
        "threads",
        "progress",
        "json",
        "connect_timeout_s"},
       &RunCalibrate,
       {{"node", "inventory name of the node to calibrate (required)"},
        {"out", "the parameter profile file to write, signed by --authority_key (required)"},
        {"authority_key",
         "authority secret key file (PREFIX-authority.key, mode 0600): signs the probe orders and the profile written "
         "(required)"},
        {"challenger_key", kChallengerKeyHelp},
        {"class", "the adversary class to rule out (a name from --classes)"},
        {"ledger", "ledger database file (SQLite) to record the probe sessions in; optional (default: not recorded)"},
        {"json", "print the calibration report as JSON on stdout instead of the text"},
        {"node_profile",
         "the node's signed profile (wipeproof-prover bench --what=all --out=FILE), verified under the inventory's "
         "node key; optional, it can only tighten the parameters"}}},
      {"plan",
       "offline calculator: m, R, counts, deadlines, wipe time and challenger CPU per adversary class",
       "From flags (GPUs per node, model, memory, fill rate; host memory; honest round p99.9; classes;\n"
       "detection target), a node's signed profile (--node_profile from bench --what=all, verified under\n"
       "--node_pub: its devices, fill rates and slowest lookup) or a parameter profile (--profile: its m,\n"
       "R, q, deadlines, class), computes per\n"
       "class what calibrate would: m, round deadline and recompute floor, R, labels per round and\n"
       "detection per device, fill time and deadline, wipe time per node and per wave, and the challenger's\n"
       "CPU time for expected labels (a warning when it cannot keep up with the fill). A table on stdout,\n"
       "or --json; --plot=FILE.svg draws detection probability against hidden fraction and wipe time\n"
       "against m per class. Fill rates scale with m by the graph's nodes per label. --fleet_nodes=F with\n"
       "--period_s=P adds the challenger cores a fleet of F nodes, each wiped every P s, needs (rounded up,\n"
       "with their utilisation). --authority_pub checks\n"
       "the signatures of --profile and --classes (verdicts state a bound only under signed ones). Exit 0,\n"
       "or 1 when no class is feasible.",
       {"profile",
        "authority_pub",
        "class",
        "classes",
        "format",
        "margin",
        "fill_slack",
        "target_fraction",
        "confidence",
        "labels_per_round",
        "max_chunk_labels",
        "gpus",
        "gpu_model",
        "gpu_memory_bytes",
        "gpu_reserve_bytes",
        "gpu_fill_gib_per_s",
        "host_memory_gib",
        "host_reserve_bytes",
        "host_fill_gib_per_s",
        "fill_rate_chunk_labels",
        "round_p999_us",
        "nodes_per_wave",
        "challenger_cores",
        "verify_rate",
        "fleet_nodes",
        "period_s",
        "json",
        "plot",
        "node_profile",
        "node_pub"},
       &RunPlan,
       {{"class", "plan only this class (a name from --classes)", "every class of --classes"},
        {"profile",
         "plan under this parameter profile (plain or signed by the authority): its m, R, q, deadlines, class and "
         "confidence replace what plan would compute from the flags",
         "none: m, R and the deadlines are computed from the flags, as calibrate would"},
        {"confidence",
         "confidence of the bound (and the probability a hidden target fraction is caught), in (0, 1 - 1e-12]; with "
         "--profile, the profile's confidence is used instead"},
        {"json", "print the plan as JSON on stdout instead of the table"},
        {"node_profile",
         "the node's signed profile (wipeproof-prover bench --what=all --out=FILE), verified under --node_pub; its "
         "devices and fill rates replace --gpus, --gpu_model, --gpu_memory_bytes and the fill-rate flags (reserves and "
         "--host_memory_gib still apply), and its slowest lookup p99.9 is added to --round_p999_us (then the network's "
         "part)"}}},
      {"status",
       "the fleet at a glance from the ledger and the inventory",
       "Per inventory node (and any other node the ledger names): its last verdict (PASS, FAIL, or BUSY\n"
       "when the agent was running another session) and that verdict's age, the bound it stated, its\n"
       "failed sessions (an order without a verdict whose session can no longer run, e.g. a challenger\n"
       "killed mid-wipe, is INTERRUPTED and counted as failed; RUNNING while it still may run), its last\n"
       "pass, and when the next pass is due: the last pass (never passed: its first verdict; no verdict\n"
       "yet: not shown) + its wave's period + jitter + 600 s for the run itself\n"
       "(OVERDUE when past). The ledger is opened read-only and its whole chain verified first;\n"
       "--challenger_key takes the challenger's PREFIX.pub (or its .key). A table on stdout, or --json.\n"
       "Exit 0 shown (whatever the nodes' verdicts), 1 the ledger does not verify, 2 bad command line,\n"
       "inventory, key or ledger file.",
       {"inventory", "ledger", "challenger_key", "json"},
       &RunStatus,
       {{"inventory", "inventory JSON file: the nodes and waves to show (required)"},
        {"challenger_key",
         "the challenger's public key file (PREFIX-challenger.pub, or its .key) the ledger is verified under "
         "(required)"},
        {"ledger", "ledger database file (SQLite), opened read-only (required)"},
        {"json", "print the fleet as JSON on stdout instead of the table"}}},
  };
  return kSubcommands;
}

int ConfigError(const char* subcommand, const std::string& message) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, subcommand, TerminalSafe(message).c_str());
  return kExitConfig;
}

int ConfigError(const char* subcommand, const Status& status) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, subcommand, CliErrorText(status).c_str());
  return CliExitCodeFor(status);
}

}  // namespace wipeproof

int main(int argc, char** argv) { return wipeproof::Main(argc, argv); }

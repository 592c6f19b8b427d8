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
                                                   "prover/bench/cli_bench_rounds.cc", "prover/cli/cli_keygen.cc",
                                                   "prover/cli/cli_serve.cc", "prover/cli/cli_doctor.cc"});
  if (!bad.empty()) return UsageError(sub->name, bad);
  google::InitGoogleLogging(argv[0]);
  if (sodium_init() < 0) return Failure(sub->name, InternalError("libsodium failed to initialise"));
  return sub->run();
}

}  // namespace

const std::vector<Subcommand>& Subcommands() {
  static const std::vector<Subcommand> kSubcommands = {
      LabelsSubcommand(), GraphInfoSubcommand(), BenchSubcommand(),
      KeygenSubcommand(), ServeSubcommand(),     DoctorSubcommand(),
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

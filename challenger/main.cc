// wipeproof-challenger: `wipeproof-challenger <subcommand> [flags]` (cli.h). Picks the subcommand
// from the table (each defined in its cli_<name>.cc); `ledger` (nested subcommands) and `selftest`
// (range checks, --json=FILE) are handed their argv and parse it with the same gflags mechanism
// themselves; the others answer --help with their own flags, parse flags with gflags, reject flags
// that do not apply, and run.
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
#include "common/terminal_text.h"
#include "proto/crypto.h"
#include "proto/wipe.capnp.h"

namespace wipeproof {
namespace {

constexpr char kProgram[] = "wipeproof-challenger";

void PrintUsage(FILE* out) {
  std::string names;
  for (const auto& s : ChallengerSubcommands()) names += (names.empty() ? "" : "|") + std::string(s.name);
  std::fprintf(out, "usage: %s <%s> [flags]\n\n", kProgram, names.c_str());
  for (const auto& s : ChallengerSubcommands()) std::fprintf(out, "  %-9s %s\n", s.name, s.synopsis);
  std::fprintf(out, "\n`%s <subcommand> --help` lists the subcommand's flags.\n\n%s", kProgram, CliExitCodeTable());
}

const ChallengerSubcommand* FindSubcommand(const char* name) {
  for (const auto& s : ChallengerSubcommands()) {
    if (s.name == std::string(name)) return &s;
  }
  return nullptr;
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
    // `help SUB [...]` is `SUB --help`: that subcommand's help (ledger: `help ledger verify` too). Only
    // ledger has subcommands of its own: another word (not a flag) after another SUB is a usage error.
    const ChallengerSubcommand* named = FindSubcommand(argv[2]);
    if (argc > 3 && argv[3][0] != '-' && named != nullptr &&
        std::strcmp(named->name, LedgerSubcommand().name) != 0) {
      std::fprintf(stderr, "%s %s: unknown subcommand '%s' (%s has none; see %s %s --help)\n", kProgram, argv[2],
                   TerminalSafe(argv[3]).c_str(), argv[2], kProgram, argv[2]);
      return kExitUsage;
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
    return kExitOk;
  }
  const ChallengerSubcommand* sub = FindSubcommand(argv[1]);
  if (sub == nullptr) {  // one line, as every error
    std::fprintf(stderr, "%s: unknown subcommand '%s' (see %s --help)\n", kProgram, TerminalSafe(argv[1]).c_str(),
                 kProgram);
    return kExitUsage;
  }
  if (sub->run_command_line != nullptr) return sub->run_command_line(argc, argv);
  for (int i = 2; i < argc; ++i) {
    if (IsCliHelpFlag(argv[i])) {
      PrintCliSubcommandHelp(kProgram, *sub);
      return kExitOk;
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
      KeygenSubcommand(),    SignSubcommand(), DelegateSubcommand(), WipeSubcommand(),   ServeSubcommand(),    CalibrateSubcommand(),
      PlanSubcommand(),      StatusSubcommand(), LedgerSubcommand(), SelftestSubcommand(),
  };
  return kSubcommands;
}

int ConfigError(const char* subcommand, const std::string& message) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, subcommand, TerminalSafe(message).c_str());
  return kExitUsage;
}

int ConfigError(const char* subcommand, const Status& status) {
  std::fprintf(stderr, "%s %s: %s\n", kProgram, subcommand, CliErrorText(status).c_str());
  return CliExitCodeFor(status);
}

}  // namespace wipeproof

int main(int argc, char** argv) { return wipeproof::Main(argc, argv); }

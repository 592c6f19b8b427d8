// The plumbing shared by the subcommand CLIs of wipeproof-prover and wipeproof-challenger: one
// subcommand's description, its --help (only the flags that apply to it), and parsing its flags
// with gflags so that a bad command line is reported by us, with our exit code, instead of gflags
// exiting with 1 on an unknown flag.
//
// Thread-safety: for main() only (gflags state is process-wide).
#pragma once

#include <string>
#include <vector>

namespace wipeproof {

// A shared flag's help as one subcommand shows it, when the flag's own text is written for another.
struct CliFlagHelp {
  std::string flag;          // gflags name, no dashes
  std::string help;          // replaces the flag's description in this subcommand's --help
  std::string default_text;  // replaces the shown default when not empty, in words without quotes (e.g. "every class")
};

struct CliSubcommand {
  const char* name;
  const char* synopsis;            // one line for the top-level usage
  const char* help;                // shown by `<program> <name> --help`
  std::vector<std::string> flags;  // the gflags that apply to it, in help order
  int (*run)();
  std::vector<CliFlagHelp> flag_help = {};  // per-subcommand help of shared flags
  // Another subcommand whose flags this one takes as they are (doctor takes serve's): help texts
  // written for it ("serve: ...") are shown without that prefix, as in its own help.
  const char* flags_of = nullptr;
  // A subcommand with subcommands or checks of its own (`ledger show`, `selftest --json=F`): main
  // hands it argv whole (argv[1] is its name); it answers its own --help and parses its flags itself
  // with ParseCliSubcommandFlags (ledger: per nested subcommand). Its result is the exit code.
  int (*run_command_line)(int argc, char** argv) = nullptr;
};

// --help, -help, --helpshort, -helpshort or -h.
bool IsCliHelpFlag(const char* arg);

// --version, -version or version.
bool IsCliVersionFlag(const char* arg);

// "PROGRAM VERSION" (the CMake project's version) and the protocol version `protocol`, on stdout.
void PrintCliVersion(const char* program, unsigned protocol);

// "usage: PROGRAM NAME [flags]", the help text, then each of sub.flags as gflags describes it, with
// sub.flag_help replacing a flag's description (and shown default) where given.
void PrintCliSubcommandHelp(const char* program, const CliSubcommand& sub);
// The same text, for a caller that prints it elsewhere (a nested subcommand's help in tests).
std::string CliSubcommandHelpText(const char* program, const CliSubcommand& sub);

// Parses argv[2..] (argv[1] is the subcommand) with gflags. `flag_files` are path suffixes of the
// files that define this program's own flags (e.g. "prover/cli/cli_flags.cc"); a flag of those files
// set on the command line but not in sub.flags is refused. Returns "" on success, else the message
// of a usage error: an unknown flag, a stray argument, or a flag that does not apply.
std::string ParseCliSubcommandFlags(const char* program, const CliSubcommand& sub, int argc, char** argv,
                                    const std::vector<std::string>& flag_files);

}  // namespace wipeproof

// `wipeproof-challenger selftest --adversaries [flags]`: runs the adversary selftest
// (selftest_runner.h) and reports it; docs/results/security-results.md is its --markdown output
// (scripts/security-results.sh).
//
// Flags: gflags, listed with their help in SelftestSubcommand (cli_selftest.cc; `selftest --help`),
// and checked for range here: --adversaries (required), --runs (1..1000000, default 200), --seed
// (default 1; the challenger's challenges always come from its CSPRNG), --only (ids, id prefixes or
// adversary numbers), --confidence (in (0, 1), default 0.99), --threads (0..256, default 1),
// --scaffold_m (powers of two in [4, 65536], or none), --json (stdout) or --json=FILE, --markdown=FILE,
// --render=JSON_FILE (run nothing: render --markdown), --progress=auto|always|never, --quiet. Every
// flag is restored after a call, so calls in one process do not see each other's flags.
// Without --json or --markdown a summary table goes to stdout. Progress goes to stderr.
// Exit codes (common/cli_exit_codes.h): 0 every outcome matches its expectation (the honest agent
// passed every run); 1 a mismatch; 2 bad command line, or an output file whose folder is missing;
// 3 a selftest that could not run, or a file that could not be written (I/O).
//
// Thread-safety: one call at a time (gflags parsing is process-wide); the calling thread must not
// have a kj event loop.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace wipeproof {

// `args` are the words after "selftest".
int RunSelftestCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

// For main: argv as main received it, argv[1] == "selftest"; std::cout and std::cerr.
int RunSelftestCommand(int argc, char** argv);

}  // namespace wipeproof

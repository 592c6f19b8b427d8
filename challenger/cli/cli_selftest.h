// `wipeproof-challenger selftest --adversaries [flags]`: runs the adversary selftest
// (selftest_runner.h) and reports it; docs/results/security-results.md is its --markdown output
// (scripts/security-results.sh).
//
// Flags (parsed here, not with gflags, so `--json` may take a file; main dispatches `selftest`
// before gflags sees argv):
//   --adversaries        run the honest agent and adversaries 1-7, 9 and 10 (required: the only section so far;
//                        adversary 8, scaffold storage, has its own check, whose JSON goes under
//                        "scaffold")
//   --runs=N             sessions per scenario, default 200, in [1, 1000000]
//   --seed=S             seed of the adversaries' own choices (hidden chunks, odd capacities),
//                        default 1; the challenger's challenges always come from its CSPRNG
//   --only=ID[,ID...]    only these scenarios: ids (1a-recompute-contiguous), id prefixes (1a) or
//                        adversary numbers (0 honest .. 7)
//   --confidence=C       one-sided Clopper-Pearson confidence, default 0.99, in (0, 1)
//   --threads=N          expected-label threads per session, default 1, in [0, 256] (0 = all cores)
//   --json[=FILE]        the JSON document on stdout, or written to FILE
//   --markdown=FILE      the Markdown document (docs/results/security-results.md) written to FILE
//   --render=JSON_FILE   run nothing: render --markdown from an existing JSON document
//   --progress=MODE      progress on stderr: auto (default; only when stderr is a terminal), always,
//                        never
//   --quiet              no progress on stderr (--progress=never)
// Without --json or --markdown a summary table goes to stdout. Progress goes to stderr.
// Exit codes (common/cli_exit_codes.h): 0 every outcome matches its expectation (the honest agent
// passed every run); 1 a mismatch; 2 bad command line, or an output file whose folder is missing;
// 3 a selftest that could not run, or a file that could not be written (I/O).
//
// Thread-safety: runs on the calling thread, which must not have a kj event loop.
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

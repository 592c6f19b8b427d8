// wipeproof-prover's subcommands (labels, graph-info, bench, keygen, serve, doctor). main.cc picks one from argv[1],
// parses the flags (cli_flags.h) and calls its Run function, whose result is the exit code.
// Output contract: results on stdout (hex lines or JSON), progress and errors on stderr; an error
// is one line, "wipeproof-prover <subcommand>: <reason>".
#pragma once

#include <string>
#include <vector>

#include "common/cli_subcommand.h"

#include "common/status.h"

namespace wipeproof {

constexpr int kExitOk = 0;       // success
constexpr int kExitFailure = 1;  // the work failed: known-answer mismatch, device error, disabled backend
constexpr int kExitUsage = 2;    // bad command line: unknown subcommand, bad flag value

using Subcommand = CliSubcommand;  // common/cli_subcommand.h

// All subcommands, in usage order.
const std::vector<Subcommand>& Subcommands();

int RunLabels();     // cli_labels.cc
int RunGraphInfo();  // cli_graph_info.cc
int RunKeygen();     // cli_keygen.cc
int RunServe();      // cli_serve.cc
int RunDoctor();     // cli_doctor.cc
// RunBench: prover/bench/cli_bench.h.

// Print "wipeproof-prover <subcommand>: <message>" on stderr and return kExitUsage / kExitFailure.
int UsageError(const char* subcommand, const std::string& message);
int Failure(const char* subcommand, const Status& status);

}  // namespace wipeproof

// wipeproof-prover's subcommands (labels, graph-info, bench, keygen, serve, doctor). main.cc picks one from argv[1],
// parses the flags (cli_flags.h) and calls its Run function, whose result is the exit code.
// Output contract: results on stdout (hex lines or JSON), progress and errors on stderr; an error
// is one line, "wipeproof-prover <subcommand>: <reason>".
#pragma once

#include <string>
#include <vector>

#include "common/cli_exit_codes.h"
#include "common/cli_subcommand.h"
#include "common/status.h"

namespace wipeproof {

// Exit codes: the one table of both binaries, common/cli_exit_codes.h (kExitOk, kExitFailed,
// kExitUsage, kExitIncomplete).

using Subcommand = CliSubcommand;  // common/cli_subcommand.h

// All subcommands, in usage order.
const std::vector<Subcommand>& Subcommands();

// Each subcommand's help, flags and Run side by side in its file.
const CliSubcommand& LabelsSubcommand();     // cli_labels.cc
const CliSubcommand& GraphInfoSubcommand();  // cli_graph_info.cc
const CliSubcommand& KeygenSubcommand();     // cli_keygen.cc
const CliSubcommand& ServeSubcommand();      // cli_serve.cc
const CliSubcommand& DoctorSubcommand();     // cli_doctor.cc
// BenchSubcommand: prover/bench/cli_bench.h.

int RunLabels();     // cli_labels.cc
int RunGraphInfo();  // cli_graph_info.cc
int RunKeygen();     // cli_keygen.cc
int RunServe();      // cli_serve.cc
int RunDoctor();     // cli_doctor.cc

// Print "wipeproof-prover <subcommand>: <message>" on stderr. UsageError returns kExitUsage;
// Failure prints the status's message (no code name) and returns CliExitCodeFor(status).
int UsageError(const char* subcommand, const std::string& message);
int Failure(const char* subcommand, const Status& status);

}  // namespace wipeproof

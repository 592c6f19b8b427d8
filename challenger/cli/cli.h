// wipeproof-challenger's subcommands. main.cc picks one from argv[1]; `ledger` goes to
// cli_ledger.h's RunLedgerCommand (its own flag parsing); the others parse gflags (cli_flags.h)
// and call their Run function, whose result is the exit code.
// Output contract: results on stdout (summaries or JSON), logs and errors on stderr; an error is
// one line, "wipeproof-challenger <subcommand>: <reason>".
#pragma once

#include <string>
#include <vector>

#include "common/cli_exit_codes.h"
#include "common/cli_subcommand.h"
#include "common/status.h"

namespace wipeproof {

// Exit codes: the one table of both binaries, common/cli_exit_codes.h. The names below are the
// challenger's words for the same codes.
constexpr int kExitPass = kExitOk;       // keygen done; wipe passed; serve: every session passed
constexpr int kExitFail = kExitFailed;   // a verdict failed, or a verdict could not be fully recorded
constexpr int kExitConfig = kExitUsage;  // no session ran: bad command line, inventory, profile, keys or ledger

using ChallengerSubcommand = CliSubcommand;  // common/cli_subcommand.h

const std::vector<ChallengerSubcommand>& ChallengerSubcommands();

int RunKeygen();  // cli_keygen.cc
int RunWipe();    // cli_wipe.cc
int RunServe();   // cli_serve.cc
int RunCalibrate();  // cli_calibrate.cc: exit 1 when calibration refuses (nothing written)
int RunPlan();       // cli_plan.cc: exit 1 when no class is feasible
int RunSign();       // cli_sign.cc: the authority signs a profile or a classes file
int RunStatus();     // cli_status.cc: the fleet at a glance from the ledger and the inventory

// Print "wipeproof-challenger <subcommand>: <message>" on stderr. The string form returns
// kExitConfig; the Status form prints the message without its code name (CliErrorText) and returns
// CliExitCodeFor(status): 2 for a bad input, 1 for a ledger that does not verify, 3 for the
// environment (an agent unreachable, the disk full).
int ConfigError(const char* subcommand, const std::string& message);
int ConfigError(const char* subcommand, const Status& status);

}  // namespace wipeproof

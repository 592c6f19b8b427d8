// wipeproof-challenger's subcommands: each file cli_<name>.cc holds one subcommand's help, flags and
// Run side by side, and gives them as a CliSubcommand (common/cli_subcommand.h). main.cc picks one
// from argv[1]; `ledger` and `selftest` take their own command line (cli_ledger.h, cli_selftest.h);
// the others parse gflags (cli_flags.h) and call their Run function, whose result is the exit code.
// Output contract: results on stdout (summaries or JSON), logs and errors on stderr; an error is
// one line, "wipeproof-challenger <subcommand>: <reason>".
#pragma once

#include <string>
#include <vector>

#include "common/cli_exit_codes.h"
#include "common/cli_subcommand.h"
#include "common/status.h"

namespace wipeproof {

// Exit codes: the one table of both binaries, common/cli_exit_codes.h.

using ChallengerSubcommand = CliSubcommand;  // common/cli_subcommand.h

// Every subcommand in the order of the top-level usage.
const std::vector<ChallengerSubcommand>& ChallengerSubcommands();

const CliSubcommand& KeygenSubcommand();     // cli_keygen.cc
const CliSubcommand& SignSubcommand();       // cli_sign.cc: the authority signs a profile or a classes file
const CliSubcommand& DelegateSubcommand();   // cli_delegate.cc: the authority delegates to a challenger key
const CliSubcommand& WipeSubcommand();       // cli_wipe.cc
const CliSubcommand& ServeSubcommand();      // cli_serve.cc
const CliSubcommand& CalibrateSubcommand();  // cli_calibrate.cc: exit 1 when calibration refuses (nothing written)
const CliSubcommand& PlanSubcommand();       // cli_plan.cc: exit 1 when no class is feasible
const CliSubcommand& StatusSubcommand();     // cli_status.cc: the fleet at a glance from the ledger and the inventory
const CliSubcommand& LedgerSubcommand();     // cli_ledger.cc: show, verify, export, audit, decode
const CliSubcommand& SelftestSubcommand();   // cli_selftest.cc

// --challenger_key as wipe, serve and calibrate read it: none runs without it.
inline constexpr char kChallengerKeyHelp[] =
    "challenger secret key file (PREFIX-challenger.key, mode 0600): signs verdicts, receipts and ledger entries, "
    "and is the challenger's TLS identity (required)";
// --delegation, --authority_pub and --authority_key as wipe and serve read them (cli_flags.h KeysFromFlags).
inline constexpr char kDelegationHelp[] =
    "the authority's delegation to --challenger_key, signed offline (`delegate`): every order carries it and agents "
    "accept orders only under it (deployment form; with --authority_pub)";
inline constexpr char kAuthorityPubForDelegationHelp[] =
    "the authority's public key file (PREFIX-authority.pub): verifies --delegation, --profile and --classes";
inline constexpr char kAuthorityKeySignsOrdersHelp[] =
    "LAB ONLY, instead of --delegation and --authority_pub: the authority's secret key file (PREFIX-authority.key); "
    "each order then carries a delegation made on the spot, and whoever holds this host can order under any class";

// Print "wipeproof-challenger <subcommand>: <message>" on stderr. The string form returns
// kExitUsage; the Status form prints the message without its code name (CliErrorText) and returns
// CliExitCodeFor(status): 2 for a bad input, 1 for a ledger that does not verify, 3 for the
// environment (an agent unreachable, the disk full).
int ConfigError(const char* subcommand, const std::string& message);
int ConfigError(const char* subcommand, const Status& status);

}  // namespace wipeproof

// The one exit-code table of wipeproof-prover and wipeproof-challenger (every subcommand, `ledger`
// and `selftest` included), and how an error Status becomes an exit code and a message for people.
// docs/operations.md "Exit codes" documents the table; both binaries' top-level --help print it.
//
//   0 kExitOk          done: the wipe passed, the ledger verified, the file was written
//   1 kExitFailed      the checked thing is bad: a verdict failed (or could not be fully recorded),
//                      a ledger or export does not verify (tampering), a known-answer mismatch,
//                      calibrate refused, plan found no feasible class
//   2 kExitUsage       nothing was done, fix the input: a bad command line, a missing, unreadable or
//                      wrong file (key, inventory, profile, ledger, a .pub where a .key is needed), a
//                      missing folder
//   3 kExitIncomplete  no conclusion either way: the environment stopped the work (no usable device,
//                      a disabled backend, a port in use, a device or I/O error), or an export's entries
//                      lack their envelopes and could not be checked (UNVERIFIED), or an export written
//                      under another schema than this build reads (`ledger audit`)
//
// Thread-safety: plain functions of their arguments.
#pragma once

#include <string>

#include "common/status.h"

namespace wipeproof {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitIncomplete = 3;

// The table above as the binaries print it in their top-level --help: a heading line "Exit codes:"
// then one indented line per code, each ending in '\n'.
const char* CliExitCodeTable();

// The exit code for a command that stopped on `status` (not OK):
//   INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, FAILED_PRECONDITION -> 2
//   DATA_LOSS (what was checked does not verify)                                     -> 1
//   anything else (UNAVAILABLE, RESOURCE_EXHAUSTED, DEADLINE_EXCEEDED, INTERNAL, ...) -> 3
// A caller that knows better (a failed verdict is 1 whatever its status) returns its own code.
int CliExitCodeFor(const Status& status);

// What people read: the status's message without its code name ("NOT_FOUND: ..." -> "..."), with
// the names and texts it quotes from files and peers escaped by TerminalSafe (common/terminal_text.h).
std::string CliErrorText(const Status& status);

}  // namespace wipeproof

#include "common/cli_exit_codes.h"

#include "common/terminal_text.h"

namespace wipeproof {

const char* CliExitCodeTable() {
  return "Exit codes (both wipeproof-prover and wipeproof-challenger):\n"
         "  0  done: the wipe passed, the ledger verified, the file was written\n"
         "  1  the checked thing is bad: a verdict failed or was not fully recorded, a ledger or export\n"
         "     does not verify, a known-answer mismatch, calibrate refused, plan found no feasible class\n"
         "  2  nothing was done, fix the input: bad command line, a missing, unreadable or wrong file\n"
         "     (key, inventory, profile, ledger), a missing folder\n"
         "  3  no conclusion: the environment stopped the work (no usable device, disabled backend, port\n"
         "     in use, RLIMIT_MEMLOCK too low, device or I/O error, the ledger's disk full), or export\n"
         "     entries without envelopes (UNVERIFIED) or of another schema\n";
}

int CliExitCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kExitOk;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kAlreadyExists:
    case StatusCode::kPermissionDenied:
    case StatusCode::kFailedPrecondition:
      return kExitUsage;
    case StatusCode::kDataLoss:
      return kExitFailed;
    default:
      return kExitIncomplete;
  }
}

std::string CliErrorText(const Status& status) { return status.ok() ? "" : TerminalSafe(status.message()); }

}  // namespace wipeproof

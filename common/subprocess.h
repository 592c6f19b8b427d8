// Running an external program (a scheduler's command-line tool, an operator's hook) without a
// shell: argv[0] is looked up in PATH, stdin is /dev/null, stdout and stderr are captured, and the
// program (with its process group) is killed when it outlives its timeout.
//
// Thread-safety: RunProcess may be called from several threads at once (posix_spawn, no global
// state); each call blocks its thread until the program ends or is killed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace wipeproof {

// What a program that ran to its end left behind.
struct ProcessResult {
  int exit_code = -1;       // the exit status, or 128 + signal when a signal ended it
  std::string stdout_text;  // at most kMaxProcessOutputBytes, the rest dropped
  std::string stderr_text;  // likewise
};

inline constexpr size_t kMaxProcessOutputBytes = 64 * 1024;

// Runs `argv` (argv[0]: a path, or a name looked up in PATH) and waits at most `timeout_us`
// microseconds for it, in this process's environment with `environment`'s "NAME=value" entries
// added (each replacing this process's NAME; never logged: a token may be among them).
// Errors: INVALID_ARGUMENT for an empty argv or an entry without "NAME="; NOT_FOUND when argv[0] cannot be executed (naming
// it); DEADLINE_EXCEEDED when the timeout passed (the program's process group was killed; the
// message carries the end of its stderr); INTERNAL for a failed pipe, spawn or wait.
// A program that ran and exited non-zero is not an error: see ProcessResult::exit_code.
StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv, uint64_t timeout_us,
                                   const std::vector<std::string>& environment = {});

// "scontrol update nodename=n1 state=drain": argv joined by spaces, for messages.
std::string CommandLineText(const std::vector<std::string>& argv);

// RunProcess, and a non-zero exit made into an error: UNAVAILABLE "COMMAND exited with status N:
// <stderr, or stdout when stderr is empty, trimmed>". Returns stdout on success.
StatusOr<std::string> RunProcessChecked(const std::vector<std::string>& argv, uint64_t timeout_us,
                                        const std::vector<std::string>& environment = {});

}  // namespace wipeproof

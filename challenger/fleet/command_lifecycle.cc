#include "challenger/fleet/command_lifecycle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "common/subprocess.h"

namespace wipeproof {

namespace {
uint64_t Micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The hook runs as the challenger's user, beside its keys and ledger, and its answers decide who is
// in a run: a hook file (or the folder holding it) that another user could change is refused, as a
// Slurm token file is. A bare name is found in PATH, the system's folders.
Status CheckHookFile(const std::string& command) {
  if (command.find('/') == std::string::npos) return Status::Ok();
  struct stat file;
  if (stat(command.c_str(), &file) != 0) return Status::Ok();  // starting it reports why (NOT_FOUND, ...)
  if (file.st_uid != 0 && file.st_uid != geteuid()) {
    return PermissionDeniedError("command hook " + command + " is owned by uid " + std::to_string(file.st_uid) +
                                 ": it runs as the challenger's user, so only root or that user may own it");
  }
  if ((file.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return PermissionDeniedError("command hook " + command + " is writable by group or others (mode " +
                                 Octal(file.st_mode) + "): it runs as the challenger's user; chmod go-w");
  }
  const std::string folder = command.substr(0, command.rfind('/') + 1);
  struct stat dir;
  if (stat(folder.c_str(), &dir) == 0 && (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (dir.st_mode & S_ISVTX) == 0) {
    return PermissionDeniedError("command hook " + command + ": its folder " + folder +
                                 " is writable by group or others (mode " + Octal(dir.st_mode) +
                                 "), so the hook could be replaced");
  }
  return Status::Ok();
}

StatusOr<std::string> RunHook(const LifecycleSpec& spec, std::vector<std::string> argv, uint64_t timeout_us) {
  WP_RETURN_IF_ERROR(CheckHookFile(spec.command));
  return RunProcessChecked(argv, timeout_us);
}
}  // namespace

StatusOr<SchedulerState> CommandLifecycle::ReadState(const std::string& node) {
  WP_ASSIGN_OR_RETURN(std::string out,
                      RunHook(spec_, {spec_.command, "state", node}, Micros(spec_.command_timeout_s)));
  const std::string line = out.substr(0, out.find('\n'));
  SchedulerState state;
  if (line == "in-service") {
    state.detail = "in service";
    return state;
  }
  const std::string out_word = "out-of-service";
  if (line.rfind(out_word, 0) == 0 && (line.size() == out_word.size() || line[out_word.size()] == ' ')) {
    state.in_service = false;
    state.detail = line.size() > out_word.size() ? "out of service: " + line.substr(out_word.size() + 1)
                                                 : std::string("out of service");
    return state;
  }
  return UnavailableError("'" + spec_.command + " state " + node +
                          "' printed neither 'in-service' nor 'out-of-service': '" + LifecycleReasonText(line) + "'");
}

Status CommandLifecycle::Drain(const std::string& node, const std::string& reason) {
  return RunHook(spec_, {spec_.command, "drain", node, LifecycleReasonText(reason)},
                 Micros(spec_.grace_s + spec_.command_timeout_s))
      .status();
}

Status CommandLifecycle::Resume(const std::string& node) {
  return RunHook(spec_, {spec_.command, "resume", node}, Micros(spec_.command_timeout_s)).status();
}

Status CommandLifecycle::KeepDrained(const std::string& node, const std::string& reason) {
  return RunHook(spec_, {spec_.command, "fail", node, LifecycleReasonText(reason)}, Micros(spec_.command_timeout_s))
      .status();
}

}  // namespace wipeproof

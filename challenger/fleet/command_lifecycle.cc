#include "challenger/fleet/command_lifecycle.h"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>

#include "common/subprocess.h"

namespace wipeproof {

namespace {
uint64_t Micros(double seconds) { return static_cast<uint64_t>(seconds * 1e6); }

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The folders from `path`'s own up to /: each owned by root or this user; the file's own folder
// writable by no one else (another user could add a file beside the hook, which a script may read
// or import); a folder above it only with the sticky bit (as /tmp: others cannot rename what is
// ours in it).
Status CheckFolders(const std::string& command, const std::string& path) {
  std::string folder = path.substr(0, path.rfind('/'));
  for (bool own_folder = true;; own_folder = false) {
    if (folder.empty()) folder = "/";
    struct stat st;
    if (stat(folder.c_str(), &st) != 0) return Status::Ok();  // starting the hook reports why
    if (st.st_uid != 0 && st.st_uid != geteuid()) {
      return PermissionDeniedError("command hook " + command + ": folder " + folder + " is owned by uid " +
                                   std::to_string(st.st_uid) + ", so the hook could be replaced");
    }
    const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (others_write && (own_folder || (st.st_mode & S_ISVTX) == 0)) {
      return PermissionDeniedError("command hook " + command + ": folder " + folder +
                                   " is writable by group or others (mode " + Octal(st.st_mode) +
                                   "), so the hook could be replaced or a file put beside it");
    }
    if (folder == "/") return Status::Ok();
    folder = folder.substr(0, folder.rfind('/'));
  }
}

// The hook runs as the challenger's user, beside its keys and ledger, and its answers decide who is
// in a run: a hook file that another user owns or could change, or in a folder another user could
// change (CheckFolders, for the path as given and for the file it resolves to), is refused, as a
// Slurm token file is. A bare name is found in PATH, the system's folders. What the hook itself
// runs (its interpreter, what it sources or imports) is beyond this check: the hook is the
// authority's code (docs/operations.md).
Status CheckHookFile(const std::string& command) {
  if (command.find('/') == std::string::npos) return Status::Ok();
  char resolved[PATH_MAX];
  if (realpath(command.c_str(), resolved) == nullptr) return Status::Ok();  // starting it reports why (NOT_FOUND, ...)
  struct stat file;
  if (stat(resolved, &file) != 0) return Status::Ok();
  if (file.st_uid != 0 && file.st_uid != geteuid()) {
    return PermissionDeniedError("command hook " + command + " is owned by uid " + std::to_string(file.st_uid) +
                                 ": it runs as the challenger's user, so only root or that user may own it");
  }
  if ((file.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return PermissionDeniedError("command hook " + command + " is writable by group or others (mode " +
                                 Octal(file.st_mode) + "): it runs as the challenger's user; chmod go-w");
  }
  std::string given = command;
  if (given[0] != '/') {
    char cwd[PATH_MAX];
    if (getcwd(cwd, sizeof cwd) == nullptr) return InternalError("command hook " + command + ": getcwd failed");
    given = std::string(cwd) + "/" + given;
  }
  WP_RETURN_IF_ERROR(CheckFolders(command, given));
  return CheckFolders(command, resolved);
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

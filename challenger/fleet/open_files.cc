#include "challenger/fleet/open_files.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace wipeproof {

uint64_t OpenFilesNeeded(uint64_t sessions) {
  if (sessions > (kUnlimitedOpenFiles - kOpenFilesBase) / kOpenFilesPerSession) return kUnlimitedOpenFiles;
  return kOpenFilesBase + kOpenFilesPerSession * sessions;
}

StatusOr<uint64_t> RaiseOpenFileLimit(uint64_t wanted) {
  struct rlimit limit {};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return InternalError(std::string("getrlimit(RLIMIT_NOFILE): ") + std::strerror(errno));
  }
  // rlim_t is unsigned and RLIM_INFINITY its largest value, so plain comparisons order it right.
  const rlim_t target = std::min<rlim_t>(limit.rlim_max, static_cast<rlim_t>(wanted));
  if (limit.rlim_cur < target) {
    struct rlimit raised = limit;
    raised.rlim_cur = target;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) {
      return InternalError("setrlimit(RLIMIT_NOFILE) to " + std::to_string(target) + " (hard limit " +
                           std::to_string(limit.rlim_max) + "): " + std::strerror(errno));
    }
    limit = raised;
  }
  return limit.rlim_cur == RLIM_INFINITY ? kUnlimitedOpenFiles : static_cast<uint64_t>(limit.rlim_cur);
}

Status CheckOpenFileRoom(uint64_t sessions, uint64_t limit, const std::string& what) {
  const uint64_t needed = OpenFilesNeeded(sessions);
  if (limit == kUnlimitedOpenFiles || needed <= limit) return Status::Ok();
  return ResourceExhaustedError(what + " needs about " + std::to_string(needed) + " open files (" +
                                std::to_string(sessions) + " concurrent sessions), the limit is " +
                                std::to_string(limit) + "; raise it (ulimit -n, or LimitNOFILE= for a systemd unit)");
}

}  // namespace wipeproof

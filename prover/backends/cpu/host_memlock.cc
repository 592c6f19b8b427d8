#include "prover/backends/cpu/host_memlock.h"

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <string>

namespace wipeproof {
namespace {

constexpr int kCapIpcLock = 14;  // linux/capability.h CAP_IPC_LOCK

// The text after "<field>:" in /proc/self/status, or "".
std::string StatusField(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, field.size() + 1, field + ":") == 0) return line.substr(field.size() + 1);
  }
  return "";
}

}  // namespace

uint64_t ProcessLockedBytes() {
  std::istringstream value(StatusField("VmLck"));
  uint64_t kib = 0;
  value >> kib;
  return kib * 1024;
}

MemlockLimit ReadMemlockLimit() {
  MemlockLimit limit;
  struct rlimit rl;
  if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
    limit.unlimited = rl.rlim_cur == RLIM_INFINITY;
    limit.limit_bytes = limit.unlimited ? 0 : static_cast<uint64_t>(rl.rlim_cur);
  }
  std::string cap_eff = StatusField("CapEff");
  if (!cap_eff.empty()) {
    uint64_t caps = std::stoull(cap_eff, nullptr, 16);
    limit.cap_ipc_lock = (caps >> kCapIpcLock) & 1;
  }
  limit.locked_bytes = ProcessLockedBytes();
  return limit;
}

Status CheckMemlockLimit(uint64_t bytes, const MemlockLimit& limit) {
  if (limit.unlimited || limit.cap_ipc_lock) return Status::Ok();
  if (limit.locked_bytes <= limit.limit_bytes && bytes <= limit.limit_bytes - limit.locked_bytes) return Status::Ok();
  return ResourceExhaustedError(
      "cannot lock " + std::to_string(bytes) + " bytes of host memory: RLIMIT_MEMLOCK is " +
      std::to_string(limit.limit_bytes) + " bytes (" + std::to_string(limit.locked_bytes) +
      " already locked); raise it with `ulimit -l unlimited` in the prover's shell, "
      "LimitMEMLOCK=infinity in its systemd unit, or run it with CAP_IPC_LOCK");
}

}  // namespace wipeproof

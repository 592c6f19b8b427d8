#include "prover/backends/cpu/host_budget.h"

#include <unistd.h>

#include "common/numbers.h"
#include "prover/backends/cpu/host_meminfo.h"

namespace wipeproof {
namespace {

// "4.00 MiB (4194304 bytes)"; below 1 MiB just "512 bytes".
std::string Both(uint64_t bytes) {
  const std::string human = FormatBytesHuman(bytes);
  const std::string raw = std::to_string(bytes) + " bytes";
  return human == raw ? raw : human + " (" + raw + ")";
}

std::string LimitText(const MemlockLimit& limit) {
  if (limit.cap_ipc_lock) return "not applied (CAP_IPC_LOCK)";
  if (limit.unlimited) return "unlimited";
  return Both(limit.limit_bytes);
}

}  // namespace

HostBudgetFacts ReadHostBudgetFacts() {
  HostBudgetFacts facts;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) facts.physical_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  auto info = ReadMemInfo();
  if (info.ok()) facts.available_bytes = info->available_bytes;
  facts.memlock = ReadMemlockLimit();
  return facts;
}

Status CheckHostBudget(uint64_t budget_bytes, uint64_t reserve_bytes, const HostBudgetFacts& facts,
                       const std::string& budget_flag) {
  if (budget_bytes > 0 && facts.physical_bytes > 0 && budget_bytes > facts.physical_bytes) {
    return InvalidArgumentError(budget_flag + " asks for " + Both(budget_bytes) +
                                ", more than this machine's physical memory, " + Both(facts.physical_bytes) +
                                "; give a budget below it (leave room for the OS)");
  }
  const MemlockLimit& limit = facts.memlock;
  if (limit.unlimited || limit.cap_ipc_lock) return Status::Ok();
  const uint64_t room = limit.locked_bytes < limit.limit_bytes ? limit.limit_bytes - limit.locked_bytes : 0;
  const std::string fix =
      "raise the limit with `ulimit -l unlimited` in the agent's shell, LimitMEMLOCK=infinity in its systemd unit, or "
      "run it with CAP_IPC_LOCK";
  if (budget_bytes > 0) {
    if (budget_bytes <= room) return Status::Ok();
    return ResourceExhaustedError(budget_flag + " asks to lock " + Both(budget_bytes) + " but RLIMIT_MEMLOCK is " +
                                  Both(limit.limit_bytes) + "; " + fix + " (or give a budget of at most " + Both(room) +
                                  ")");
  }
  const uint64_t fill = facts.available_bytes > reserve_bytes ? facts.available_bytes - reserve_bytes : 0;
  if (fill <= room) return Status::Ok();
  return ResourceExhaustedError(
      "no host budget given (--host_budget_gib or --host_budget_bytes): an order would lock "
      "MemAvailable less the reserve, " +
      Both(fill) + ", but RLIMIT_MEMLOCK is " + Both(limit.limit_bytes) + "; " + fix +
      " (or give --host_budget_bytes of at most " + std::to_string(room) + ")");
}

std::string DescribeHostBudget(uint64_t budget_bytes, uint64_t reserve_bytes, const HostBudgetFacts& facts) {
  std::string s = budget_bytes > 0 ? "host budget " + Both(budget_bytes)
                                   : "no host budget: an order fills MemAvailable less the reserve";
  s += "; reserve " + Both(reserve_bytes) + " of MemAvailable";
  s += "; physical memory " + Both(facts.physical_bytes) + ", MemAvailable " + Both(facts.available_bytes);
  if (budget_bytes > 0 && facts.physical_bytes > 0) {
    s += ", budget " + FormatFixed(100.0 * static_cast<double>(budget_bytes) / facts.physical_bytes, 1) +
         "% of physical";
  }
  s += "; RLIMIT_MEMLOCK " + LimitText(facts.memlock);
  return s;
}

}  // namespace wipeproof

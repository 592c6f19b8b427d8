// The agent's host budget checked at start-up against what the machine can lock: physical memory
// (sysconf) and RLIMIT_MEMLOCK (host_memlock.h), so a budget that could never be filled, or a lock
// limit that would refuse the first order, stops `serve` at once with the fix to apply instead of
// failing the first wipe.
// Thread-safety: pure functions (ReadHostBudgetFacts reads process and machine state).
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "prover/backends/cpu/host_memlock.h"

namespace wipeproof {

struct HostBudgetFacts {
  uint64_t physical_bytes = 0;   // sysconf(_SC_PHYS_PAGES) * page size; 0 = unknown
  uint64_t available_bytes = 0;  // MemAvailable (/proc/meminfo); 0 = unknown
  MemlockLimit memlock;
};

HostBudgetFacts ReadHostBudgetFacts();

// OK when the agent can lock what it would fill: `budget_bytes`, or when 0 (no budget) MemAvailable
// less `reserve_bytes`. `budget_flag` is how the budget was given (e.g. "--host_budget_gib=100"),
// named in the errors. Errors: INVALID_ARGUMENT for a budget above physical memory;
// RESOURCE_EXHAUSTED when RLIMIT_MEMLOCK (without CAP_IPC_LOCK) is below what would be locked,
// naming the limit and the fix (`ulimit -l unlimited`, LimitMEMLOCK=infinity, or a smaller budget).
Status CheckHostBudget(uint64_t budget_bytes, uint64_t reserve_bytes, const HostBudgetFacts& facts,
                       const std::string& budget_flag);

// One line for the start-up log, e.g. "host budget 0.25 GiB (268435456 bytes); reserve 256.00 MiB
// (268435456 bytes) of MemAvailable when no budget is given; physical memory 23.54 GiB
// (25275240448 bytes), MemAvailable ...; RLIMIT_MEMLOCK unlimited".
std::string DescribeHostBudget(uint64_t budget_bytes, uint64_t reserve_bytes, const HostBudgetFacts& facts);

}  // namespace wipeproof

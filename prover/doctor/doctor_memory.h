// Doctor checks of host memory: the host budget against physical memory and MemAvailable, and
// RLIMIT_MEMLOCK against what an order would lock. The verdicts come from CheckHostBudget
// (prover/backends/cpu/host_budget.h), the same function `serve` runs at start-up, so doctor and
// serve never disagree.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "prover/backends/cpu/host_budget.h"
#include "prover/doctor/doctor_check.h"

namespace wipeproof {

// Two results, "host budget" and "mlock limit". `budget_bytes` 0 means no budget (MemAvailable
// less `reserve_bytes`); `budget_flag` names how it was given (e.g. "--host_budget_gib=2").
// host budget: FAIL above physical memory; WARN above MemAvailable less the reserve (the fill would
// be short now: other processes use the memory); OK otherwise.
// mlock limit: FAIL when RLIMIT_MEMLOCK (without CAP_IPC_LOCK) is below what would be locked, with
// the fix (`ulimit -l unlimited`, LimitMEMLOCK=infinity); OK otherwise.
std::vector<CheckResult> CheckHostMemory(uint64_t budget_bytes, uint64_t reserve_bytes, const HostBudgetFacts& facts,
                                         const std::string& budget_flag);

}  // namespace wipeproof

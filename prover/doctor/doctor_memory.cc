#include "prover/doctor/doctor_memory.h"

#include "common/status.h"

namespace wipeproof {

std::vector<CheckResult> CheckHostMemory(uint64_t budget_bytes, uint64_t reserve_bytes, const HostBudgetFacts& facts,
                                         const std::string& budget_flag) {
  const Status verdict = CheckHostBudget(budget_bytes, reserve_bytes, facts, budget_flag);
  const uint64_t fillable = facts.available_bytes > reserve_bytes ? facts.available_bytes - reserve_bytes : 0;

  CheckResult budget{"host budget", CheckStatus::kOk, "", ""};
  const std::string machine =
      "physical memory " + (facts.physical_bytes ? BytesForPeople(facts.physical_bytes) : std::string("unknown")) +
      ", MemAvailable " + (facts.available_bytes ? BytesForPeople(facts.available_bytes) : std::string("unknown"));
  if (budget_bytes == 0) {
    budget.detail = "no budget (" + budget_flag + "): an order may fill MemAvailable less the reserve of " +
                    BytesForPeople(reserve_bytes) + ", now " + BytesForPeople(fillable) + "; " + machine;
  } else {
    const double pct = facts.physical_bytes ? 100.0 * static_cast<double>(budget_bytes) / facts.physical_bytes : 0;
    budget.detail =
        budget_flag + ": " + BytesForPeople(budget_bytes) +
        (facts.physical_bytes ? " (" + std::to_string(static_cast<int>(pct + 0.5)) + "% of physical)" : "") + "; " +
        machine;
  }
  if (verdict.code() == StatusCode::kInvalidArgument) {
    budget.status = CheckStatus::kFail;
    budget.detail = verdict.message();
    budget.fix = "give a budget below physical memory (leave room for the OS)";
  } else if (budget_bytes > 0 && facts.available_bytes > 0 && budget_bytes > fillable) {
    budget.status = CheckStatus::kWarn;
    budget.detail += "; the budget is more than MemAvailable less the reserve (" + BytesForPeople(fillable) +
                     "): an order for all of it would be short now";
    budget.fix = "free memory on this node or lower the budget";
  }

  CheckResult mlock{"mlock limit", CheckStatus::kOk, "", ""};
  const MemlockLimit& limit = facts.memlock;
  const std::string limit_text = limit.cap_ipc_lock ? "not applied (CAP_IPC_LOCK held)"
                                 : limit.unlimited  ? "unlimited"
                                                    : BytesForPeople(limit.limit_bytes);
  mlock.detail = "RLIMIT_MEMLOCK " + limit_text + "; an order would lock up to " +
                 BytesForPeople(budget_bytes > 0 ? budget_bytes : fillable);
  if (verdict.code() == StatusCode::kResourceExhausted) {
    mlock.status = CheckStatus::kFail;
    mlock.detail = verdict.message();
    mlock.fix =
        "`ulimit -l unlimited` in the agent's shell, LimitMEMLOCK=infinity in its systemd unit, CAP_IPC_LOCK, or a "
        "smaller budget";
  }
  return {budget, mlock};
}

}  // namespace wipeproof

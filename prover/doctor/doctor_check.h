// One verdict of `wipeproof-prover doctor` (a check, its status, what was found in words and the
// fix for a FAIL) and the two ways they are printed: a table for people, JSON for tools.
//
// Status: OK (ready), WARN (a wipe can run, but look: e.g. no GPU on a host-only node), FAIL (a
// wipe cannot run, or would fail, until the fix is applied).
// JSON shape: {"wipe_can_run": bool, "checks": [{"check", "status": "OK"|"WARN"|"FAIL", "detail",
// "fix"}]} ("fix" is "" unless the status is FAIL or WARN with something to do).
// Thread-safety: values and pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace wipeproof {

enum class CheckStatus { kOk, kWarn, kFail };

// "OK", "WARN", "FAIL".
const char* CheckStatusName(CheckStatus status);

struct CheckResult {
  std::string check;  // short name: "node key", "listen port", ...
  CheckStatus status = CheckStatus::kOk;
  std::string detail;  // what was found, in words (sizes in GiB and bytes)
  std::string fix;     // what to do; empty when nothing
};

// True when no result is FAIL (WARNs do not stop a wipe).
bool WipeCanRun(const std::vector<CheckResult>& results);

// The table: a header, one row per check (long details wrap under their column), each fix on a
// "fix:" line below its row, and a last line "wipe can run: yes|no (N FAIL, M WARN)".
std::string FormatDoctorTable(const std::vector<CheckResult>& results);

nlohmann::json DoctorJson(const std::vector<CheckResult>& results);

// "4.00 GiB (4294967296 bytes)"; below 1 MiB just "512 bytes".
std::string BytesForPeople(uint64_t bytes);

}  // namespace wipeproof

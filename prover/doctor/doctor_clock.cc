#include "prover/doctor/doctor_clock.h"

#include <sys/timex.h>

#include <vector>

#include "common/numbers.h"
#include "common/subprocess.h"

namespace wipeproof {
namespace {

constexpr uint64_t kToolTimeoutUs = 5'000'000;

std::string Seconds(int64_t us) { return FormatFixed(static_cast<double>(us) / 1e6, 3) + " s"; }

}  // namespace

ClockFacts ReadClockFacts() {
  ClockFacts facts;
  auto run = RunProcess({"timedatectl", "show", "-p", "NTPSynchronized", "--value"}, kToolTimeoutUs);
  if (run.ok() && run->exit_code == 0) {
    const std::string& out = run->stdout_text;
    if (out.rfind("yes", 0) == 0) facts.ntp_synchronized = true;
    if (out.rfind("no", 0) == 0) facts.ntp_synchronized = false;
  }
  struct timex tx {};
  const int state = adjtimex(&tx);
  if (state != -1) {
    facts.kernel_known = true;
    facts.kernel_unsynchronized = (tx.status & STA_UNSYNC) != 0 || state == TIME_ERROR;
    facts.max_error_us = tx.maxerror;
    facts.est_error_us = tx.esterror;
  }
  return facts;
}

CheckResult CheckClock(const ClockFacts& facts, int64_t clock_skew_us) {
  CheckResult r{"clock sync", CheckStatus::kOk, "", ""};
  const std::string kernel =
      facts.kernel_known
          ? "kernel: " + std::string(facts.kernel_unsynchronized ? "unsynchronised" : "synchronised") +
                ", estimated error " + Seconds(facts.est_error_us) + ", maximum error " + Seconds(facts.max_error_us)
          : std::string("kernel: adjtimex unavailable");
  const std::string ntp = facts.ntp_synchronized.has_value()
                              ? std::string("timedatectl NTPSynchronized=") + (*facts.ntp_synchronized ? "yes" : "no")
                              : std::string("timedatectl: not present");
  const bool synced = facts.ntp_synchronized.value_or(facts.kernel_known && !facts.kernel_unsynchronized);
  r.detail = ntp + "; " + kernel + "; orders tolerate " + Seconds(clock_skew_us) + " (--clock_skew_us)";
  const std::string fix =
      "enable time synchronisation (`timedatectl set-ntp true` with systemd-timesyncd, or chrony) against the same "
      "time source as the challenger";
  if (synced) return r;
  if (!facts.ntp_synchronized.has_value() && !facts.kernel_known) {
    r.status = CheckStatus::kWarn;
    r.detail = "cannot tell whether the clock is synchronised; " + r.detail;
    r.fix = fix;
    return r;
  }
  if (facts.kernel_known && facts.max_error_us > clock_skew_us) {
    r.status = CheckStatus::kFail;
    r.detail = "not synchronised and the kernel's error bound exceeds the tolerated skew; " + r.detail;
    r.fix = fix;
    return r;
  }
  r.status = CheckStatus::kWarn;
  r.detail = "not synchronised; " + r.detail;
  r.fix = fix;
  return r;
}

}  // namespace wipeproof

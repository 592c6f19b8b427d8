// Doctor check of clock synchronisation: the agent refuses orders whose issue or expiry time is off
// by more than --clock_skew_us from its own wall clock, so an unsynchronised clock refuses wipes.
// Facts: `timedatectl show -p NTPSynchronized --value` (systemd-timesyncd, chrony and ntpd all feed
// it) when timedatectl exists, and the kernel's adjtimex(2) state (STA_UNSYNC, maxerror and
// esterror in microseconds) always.
// Thread-safety: pure functions (ReadClockFacts runs timedatectl and calls adjtimex).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "prover/doctor/doctor_check.h"

namespace wipeproof {

struct ClockFacts {
  std::optional<bool> ntp_synchronized;  // timedatectl's NTPSynchronized; empty: no timedatectl (or no answer)
  bool kernel_known = false;             // adjtimex answered
  bool kernel_unsynchronized = true;     // STA_UNSYNC set (or adjtimex returned TIME_ERROR)
  int64_t max_error_us = 0;              // adjtimex maxerror: the kernel's bound on the clock's error
  int64_t est_error_us = 0;              // adjtimex esterror: its estimate
};

ClockFacts ReadClockFacts();

// OK when synchronised (with the estimated error); WARN when not synchronised but the kernel's
// error bound is within `clock_skew_us`, or when nothing can tell; FAIL when the error bound
// exceeds `clock_skew_us` on an unsynchronised clock (orders would be refused), with the fix.
CheckResult CheckClock(const ClockFacts& facts, int64_t clock_skew_us);

}  // namespace wipeproof

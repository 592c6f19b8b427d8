#include "common/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace wipeproof {
namespace {
class RealClock : public Clock {
 public:
  int64_t MonotonicMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t UnixMicros() const override {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};
}  // namespace

const Clock& SystemClock() {
  static const RealClock clock;
  return clock;
}

std::string FormatUnixMicrosUtc(int64_t unix_micros) {
  int64_t seconds = unix_micros / 1'000'000;
  int64_t micros = unix_micros % 1'000'000;
  if (micros < 0) {  // floor towards the past for times before 1970
    micros += 1'000'000;
    seconds -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
  return buffer;
}

}  // namespace wipeproof

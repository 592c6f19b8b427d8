// An injectable clock (leveldb Env style): deadline logic takes a Clock so tests drive time
// deterministically with FakeClock. Units: microseconds.
// Thread-safety: SystemClock and FakeClock are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace wipeproof {

class Clock {
 public:
  virtual ~Clock() = default;
  // Microseconds on a monotonic clock (never goes back; arbitrary origin). For timing.
  virtual int64_t MonotonicMicros() const = 0;
  // Microseconds since the Unix epoch, wall clock. For expiry times and records.
  virtual int64_t UnixMicros() const = 0;
};

// "2027-01-15T08:00:00.123456Z" for microseconds since the Unix epoch (UTC).
std::string FormatUnixMicrosUtc(int64_t unix_micros);

// The process's real clock (steady_clock and system_clock).
const Clock& SystemClock();

// A clock that moves only when told to.
class FakeClock : public Clock {
 public:
  explicit FakeClock(int64_t unix_micros = 1'800'000'000'000'000) : unix_(unix_micros) {}
  int64_t MonotonicMicros() const override { return mono_.load(); }
  int64_t UnixMicros() const override { return unix_.load(); }
  // Moves both clocks forward by `micros`.
  void Advance(int64_t micros) {
    mono_ += micros;
    unix_ += micros;
  }
  // Moves only the wall clock (clock skew).
  void SetUnixMicros(int64_t unix_micros) { unix_ = unix_micros; }

 private:
  std::atomic<int64_t> mono_{1'000'000};
  std::atomic<int64_t> unix_;
};

}  // namespace wipeproof

// The fill's progress in the agent's log (stderr, the journal under systemd): per device, a line
// when another ~10 % is done (at most one a second) or when 10 s passed since its last line, e.g.
//   <session>: fill progress: device 'host' 40.0% 1000.00 MiB of 2.44 GiB (1048576000/2621440000 bytes),
//   1.52 GB/s, eta 9 s
// so an operator tailing a long fill (minutes for a large host budget) sees it move.
// Modes (`serve --progress`): never: no lines; auto (the default): lines only once a fill has run
// for 2 s (short fills stay quiet), whether or not stderr is a terminal (a service's log is never a
// terminal, and this is its only sign of life); always: lines from the start, and a last line at
// 100 % for every device.
//
// FillProgressTracker decides (pure: the caller gives the elapsed time and the labels done, so
// tests need no clock); FillProgressLogger samples a fill's slots on a thread of its own.
// Thread-safety: the tracker is not thread-safe; the logger's thread is its only user.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/progress_line.h"
#include "prover/agent/device_fill.h"

namespace wipeproof {

inline constexpr int64_t kFillProgressQuietUs = 2'000'000;    // auto: nothing before a fill ran this long
inline constexpr int64_t kFillProgressMaxGapUs = 10'000'000;  // a line at least this often while filling
inline constexpr int64_t kFillProgressMinGapUs = 1'000'000;   // and at most one a second per device
inline constexpr double kFillProgressStep = 0.10;             // a line per tenth of a device

class FillProgressTracker {
 public:
  struct Device {
    std::string selector;
    uint64_t total_labels = 0;
  };
  FillProgressTracker(std::vector<Device> devices, ProgressMode mode);

  // Lines due at `elapsed_us` after the fill began, given each device's labels done (same order).
  std::vector<std::string> Sample(int64_t elapsed_us, const std::vector<uint64_t>& done);
  // Lines at the end: in mode always, or for a device that had a line, a last one at its count.
  std::vector<std::string> Finish(int64_t elapsed_us, const std::vector<uint64_t>& done);

 private:
  struct State {
    bool printed = false;
    bool final_printed = false;
    int64_t last_us = 0;
    uint64_t last_done = 0;
  };
  std::string Line(size_t i, int64_t elapsed_us, uint64_t done) const;

  const std::vector<Device> devices_;
  const ProgressMode mode_;
  std::vector<State> state_;
};

// Logs (glog INFO, prefixed "`name`: ") the progress of `slots` while they fill, sampling every
// 250 ms from its own thread; the destructor stops it and logs the last lines, unless
// StopWithoutLastLines() stopped it first (a fill that failed or was cancelled: its error is the
// last word, not a progress line).
class FillProgressLogger {
 public:
  FillProgressLogger(std::string name, const std::vector<std::unique_ptr<DeviceSlot>>& slots, ProgressMode mode);
  ~FillProgressLogger();

  // Stops the sampling thread now without the last lines. Call from the thread that owns this.
  void StopWithoutLastLines();

 private:
  std::vector<uint64_t> Done() const;
  void Run();
  void Stop();

  const std::string name_;
  const std::vector<std::unique_ptr<DeviceSlot>>& slots_;
  const ProgressMode mode_;
  FillProgressTracker tracker_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool last_lines_ = true;
  std::thread thread_;
};

}  // namespace wipeproof

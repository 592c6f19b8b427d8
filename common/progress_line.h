// A progress line on stderr for long work (labels over a large range, a device fill): silent for
// the first second, then at most one update a second (rewritten in place on a terminal, one line
// every 10 s otherwise), e.g.
//   fill: 41.2% 3.30/8.00 GiB, 1.52 GB/s, 4.7 M labels/s, eta 3 s
// Whether to draw at all is the caller's `--progress=auto|always|never` (ProgressMode): auto draws
// only when stderr is a terminal, so logs and pipes stay quiet.
// Thread-safety: Update() may be called from any thread; Finish() once, after the last Update().
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/status.h"

namespace wipeproof {

enum class ProgressMode { kAuto, kAlways, kNever };

// "auto", "always" or "never"; "true" and "false" (the former boolean flag) mean always and never.
// Errors: INVALID_ARGUMENT naming the accepted values.
StatusOr<ProgressMode> ParseProgressMode(const std::string& text);

// Whether progress is drawn: always, never, or (auto) when stderr is a terminal.
bool ProgressWanted(ProgressMode mode);

// What a line counts: 32-byte labels (sizes, GB/s, labels/s), things named by a unit ("rounds":
// count, rate, ETA), or seconds waited against a limit ("45 s of at most 300 s").
enum class ProgressStyle { kLabels, kCount, kWait };

class ProgressLine {
 public:
  // `what` prefixes the line; `total_labels` is the work (32-byte labels); disabled: prints nothing.
  ProgressLine(std::string what, uint64_t total_labels, bool enabled);
  // kCount: `total` things called `unit` ("rounds"); kWait: `total` seconds at most (unit unused).
  ProgressLine(std::string what, uint64_t total, bool enabled, ProgressStyle style, std::string unit);
  ~ProgressLine() { Finish(); }

  void Update(uint64_t done_labels);
  // Ends the line on a terminal if anything was printed; idempotent.
  void Finish();

 private:
  void Print(uint64_t done, std::chrono::steady_clock::time_point now);

  const std::string what_;
  const uint64_t total_;
  const ProgressStyle style_ = ProgressStyle::kLabels;
  const std::string unit_;
  const bool enabled_;
  const bool tty_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_print_;
  bool printed_ = false;
  bool finished_ = false;
};

}  // namespace wipeproof

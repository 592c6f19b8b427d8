#include "common/progress_line.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace wipeproof {

StatusOr<ProgressMode> ParseProgressMode(const std::string& text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "always" || text == "true") return ProgressMode::kAlways;
  if (text == "never" || text == "false") return ProgressMode::kNever;
  return InvalidArgumentError("--progress: want auto (only on a terminal), always or never; got '" + text + "'");
}

bool ProgressWanted(ProgressMode mode) {
  if (mode == ProgressMode::kAuto) return isatty(STDERR_FILENO) == 1;
  return mode == ProgressMode::kAlways;
}

ProgressLine::ProgressLine(std::string what, uint64_t total_labels, bool enabled)
    : what_(std::move(what)),
      total_(total_labels),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

ProgressLine::ProgressLine(std::string what, uint64_t total, bool enabled, ProgressStyle style, std::string unit)
    : what_(std::move(what)),
      total_(total),
      style_(style),
      unit_(std::move(unit)),
      enabled_(enabled),
      tty_(isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

void ProgressLine::Update(uint64_t done_labels) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  auto now = std::chrono::steady_clock::now();
  const auto interval = tty_ ? std::chrono::seconds(1) : std::chrono::seconds(10);
  if (now - start_ < std::chrono::seconds(1) || (printed_ && now - last_print_ < interval)) return;
  Print(done_labels, now);
}

void ProgressLine::Print(uint64_t done, std::chrono::steady_clock::time_point now) {
  const double s = std::chrono::duration<double>(now - start_).count();
  const char* begin = tty_ ? "\r" : "";
  const char* end = tty_ ? "\033[K" : "\n";
  if (style_ != ProgressStyle::kLabels) {
    const unsigned long long d = done, t = total_;
    if (style_ == ProgressStyle::kWait) {
      std::fprintf(stderr, "%s%s: %llu s of at most %llu s%s", begin, what_.c_str(), d, t, end);
    } else {
      const double rate = s > 0 ? done / s : 0;
      std::fprintf(stderr, "%s%s: %.1f%% %llu/%llu %s, %.1f %s/s, eta %.0f s%s", begin, what_.c_str(),
                   t ? 100.0 * d / t : 100.0, d, t, unit_.c_str(), rate, unit_.c_str(),
                   rate > 0 && t > d ? (t - d) / rate : 0.0, end);
    }
    std::fflush(stderr);
    printed_ = true;
    last_print_ = now;
    return;
  }
  const double bytes = 32.0 * done, total_bytes = 32.0 * total_;
  const double rate = s > 0 ? done / s : 0;
  const double eta = rate > 0 ? (total_ - done) / rate : 0;
  std::fprintf(stderr, "%s%s: %.1f%% %.2f/%.2f GiB, %.2f GB/s, %.2f M labels/s, eta %.0f s%s", tty_ ? "\r" : "",
               what_.c_str(), total_ ? 100.0 * done / total_ : 100.0, bytes / (1u << 30), total_bytes / (1u << 30),
               s > 0 ? bytes / s / 1e9 : 0, rate / 1e6, eta, tty_ ? "\033[K" : "\n");
  std::fflush(stderr);
  printed_ = true;
  last_print_ = now;
}

void ProgressLine::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (enabled_ && printed_ && tty_) std::fputc('\n', stderr);
}

}  // namespace wipeproof

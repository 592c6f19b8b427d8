#include "prover/agent/fill_progress.h"

#include <glog/logging.h>

#include <utility>

#include "common/numbers.h"

namespace wipeproof {
namespace {

constexpr uint64_t kLabelBytesHere = 32;  // bytes per label (label-spec.md)

std::vector<FillProgressTracker::Device> DevicesOf(const std::vector<std::unique_ptr<DeviceSlot>>& slots) {
  std::vector<FillProgressTracker::Device> devices;
  for (const auto& slot : slots) devices.push_back({slot->plan.selector, slot->plan.label_count});
  return devices;
}

}  // namespace

FillProgressTracker::FillProgressTracker(std::vector<Device> devices, ProgressMode mode)
    : devices_(std::move(devices)), mode_(mode), state_(devices_.size()) {}

std::string FillProgressTracker::Line(size_t i, int64_t elapsed_us, uint64_t done) const {
  const Device& d = devices_[i];
  const uint64_t bytes = done * kLabelBytesHere, total = d.total_labels * kLabelBytesHere;
  const double seconds = static_cast<double>(elapsed_us) / 1e6;
  const double rate = seconds > 0 ? static_cast<double>(bytes) / seconds : 0;  // bytes/s
  const double pct = total ? 100.0 * static_cast<double>(bytes) / static_cast<double>(total) : 100.0;
  std::string line = "fill progress: device '" + d.selector + "' " + FormatFixed(pct, 1) + "% " +
                     FormatBytesHuman(bytes) + " of " + FormatBytesHuman(total) + " (" + std::to_string(bytes) + "/" +
                     std::to_string(total) + " bytes), " + FormatFixed(rate / 1e9, 2) + " GB/s";
  if (done < d.total_labels) {
    line += rate > 0 ? ", eta " + FormatFixed(static_cast<double>(total - bytes) / rate, 0) + " s" : ", eta unknown";
  } else {
    line += ", done in " + FormatFixed(seconds, 1) + " s";
  }
  return line;
}

std::vector<std::string> FillProgressTracker::Sample(int64_t elapsed_us, const std::vector<uint64_t>& done) {
  std::vector<std::string> lines;
  if (mode_ == ProgressMode::kNever) return lines;
  if (mode_ == ProgressMode::kAuto && elapsed_us < kFillProgressQuietUs) return lines;
  for (size_t i = 0; i < devices_.size() && i < done.size(); ++i) {
    State& s = state_[i];
    const uint64_t total = devices_[i].total_labels;
    if (s.final_printed || done[i] == 0) continue;
    const bool step = static_cast<double>(done[i] - s.last_done) >= kFillProgressStep * static_cast<double>(total);
    const int64_t since = elapsed_us - s.last_us;
    const bool due = !s.printed ? true : (step && since >= kFillProgressMinGapUs) || since >= kFillProgressMaxGapUs;
    if (!due) continue;
    lines.push_back(Line(i, elapsed_us, done[i]));
    s.printed = true;
    s.final_printed = done[i] >= total;
    s.last_us = elapsed_us;
    s.last_done = done[i];
  }
  return lines;
}

std::vector<std::string> FillProgressTracker::Finish(int64_t elapsed_us, const std::vector<uint64_t>& done) {
  std::vector<std::string> lines;
  if (mode_ == ProgressMode::kNever) return lines;
  for (size_t i = 0; i < devices_.size() && i < done.size(); ++i) {
    State& s = state_[i];
    if (s.final_printed || (!s.printed && mode_ != ProgressMode::kAlways)) continue;
    lines.push_back(Line(i, elapsed_us, done[i]));
    s.printed = s.final_printed = true;
  }
  return lines;
}

FillProgressLogger::FillProgressLogger(std::string name, const std::vector<std::unique_ptr<DeviceSlot>>& slots,
                                       ProgressMode mode)
    : name_(std::move(name)),
      slots_(slots),
      mode_(mode),
      tracker_(DevicesOf(slots), mode),
      start_(std::chrono::steady_clock::now()) {
  if (mode_ != ProgressMode::kNever) thread_ = std::thread([this] { Run(); });
}

FillProgressLogger::~FillProgressLogger() { Stop(); }

void FillProgressLogger::StopWithoutLastLines() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_lines_ = false;
  }
  Stop();
}

void FillProgressLogger::Stop() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

std::vector<uint64_t> FillProgressLogger::Done() const {
  std::vector<uint64_t> done;
  for (const auto& slot : slots_) done.push_back(slot->labels_filled.load());
  return done;
}

void FillProgressLogger::Run() {
  auto elapsed = [this] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start_).count();
  };
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
    for (const std::string& line : tracker_.Sample(elapsed(), Done())) LOG(INFO) << name_ << ": " << line;
  }
  if (!last_lines_) return;
  for (const std::string& line : tracker_.Finish(elapsed(), Done())) LOG(INFO) << name_ << ": " << line;
}

}  // namespace wipeproof

#include "challenger/session/wave_sync.h"

namespace wipeproof {

WaveSync::WaveSync(std::vector<std::string> members) : members_(std::move(members)) {
  for (const std::string& m : members_) ok_[m] = true;
}

void WaveSync::ArriveFilled(const std::string& member, bool filled) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!filled) ok_[member] = false;
  if (filled_.insert(member).second) ++filled_arrivals_;
  cv_.notify_all();
  cv_.wait(lock, [this] { return filled_arrivals_ >= members_.size(); });
}

std::vector<std::string> WaveSync::ArriveReleasing(const std::string& member, bool held) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!held) ok_[member] = false;
  if (filled_.insert(member).second) ++filled_arrivals_;  // releasing implies past barrier 1
  if (released_.insert(member).second) ++release_arrivals_;
  cv_.notify_all();
  cv_.wait(lock, [this] { return release_arrivals_ >= members_.size(); });
  std::vector<std::string> not_held;
  for (const std::string& m : members_) {
    if (m != member && !ok_[m]) not_held.push_back(m);
  }
  return not_held;
}

void WaveSync::Leave(const std::string& member) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_.count(member) != 0) return;
  }
  ArriveReleasing(member, false);
}

}  // namespace wipeproof

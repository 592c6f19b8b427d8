#include "challenger/session/wave_sync.h"

namespace wipeproof {

WaveSync::WaveSync(std::vector<std::string> members) : members_(std::move(members)) {
  for (const std::string& m : members_) ok_[m] = true;
}

void WaveSync::MarkFailedLocked(const std::string& member) {
  ok_[member] = false;
  // A failed member has nothing more to report: the others stop waiting for it.
  ready_.insert(member);
  filled_.insert(member);
  proof_done_.insert(member);
}

void WaveSync::ArriveReady(const std::string& member, bool ok) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ok) MarkFailedLocked(member);
  ready_.insert(member);
  cv_.notify_all();
  cv_.wait(lock, [this] { return ready_.size() >= members_.size(); });
}

void WaveSync::ReportFilled(const std::string& member, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok) MarkFailedLocked(member);
  filled_.insert(member);
  cv_.notify_all();
}

void WaveSync::ReportProofDone(const std::string& member, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ok) MarkFailedLocked(member);
  proof_done_.insert(member);
  cv_.notify_all();
}

bool WaveSync::WaveDone() const {
  std::lock_guard<std::mutex> lock(mu_);
  return filled_.size() >= members_.size() && proof_done_.size() >= members_.size();
}

bool WaveSync::AllFilled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return filled_.size() >= members_.size();
}

std::vector<std::string> WaveSync::ArriveReleasing(const std::string& member, bool held) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!held) MarkFailedLocked(member);
  ready_.insert(member);  // releasing implies past the earlier steps
  filled_.insert(member);
  proof_done_.insert(member);
  released_.insert(member);
  cv_.notify_all();
  cv_.wait(lock, [this] { return released_.size() >= members_.size(); });
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

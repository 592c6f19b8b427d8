#include "challenger/session/wave_sync.h"

namespace wipeproof {

WaveSync::WaveSync(std::vector<std::string> members) : members_(std::move(members)) {
  for (const std::string& m : members_) ok_[m] = true;
  std::lock_guard<std::mutex> lock(mu_);
  UpdateLocked();
}

std::vector<std::function<void()>> WaveSync::UpdateLocked() {
  const bool filled = filled_.size() >= members_.size();
  const bool done = filled && proof_done_.size() >= members_.size();
  const bool ready = ready_.size() >= members_.size();
  const bool released = released_.size() >= members_.size();
  const bool turned = (filled && !all_filled_.load(std::memory_order_relaxed)) ||
                      (done && !wave_done_.load(std::memory_order_relaxed)) || (ready && !all_ready_) ||
                      (released && !all_released_);
  if (filled) all_filled_.store(true, std::memory_order_release);
  if (done) wave_done_.store(true, std::memory_order_release);
  all_ready_ = all_ready_ || ready;
  all_released_ = all_released_ || released;
  std::vector<std::function<void()>> to_call;
  if (!turned) return to_call;
  to_call.reserve(listeners_.size());
  for (const auto& [id, on_change] : listeners_) to_call.push_back(on_change);
  return to_call;
}

void WaveSync::Notify(const std::vector<std::function<void()>>& listeners) {
  for (const auto& on_change : listeners) on_change();
}

uint64_t WaveSync::AddListener(std::function<void()> on_change) {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t id = next_listener_++;
  listeners_.emplace(id, std::move(on_change));
  return id;
}

void WaveSync::RemoveListener(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  listeners_.erase(id);
}

void WaveSync::MarkFailedLocked(const std::string& member) {
  ok_[member] = false;
  // A failed member has nothing more to report: the others stop waiting for it.
  ready_.insert(member);
  filled_.insert(member);
  proof_done_.insert(member);
}

void WaveSync::WaitAtBarrier(std::unique_lock<std::mutex>& lock, const std::vector<std::function<void()>>& turned,
                             BarrierWait* wait, const std::function<bool()>& open) {
  cv_.notify_all();
  if (wait == nullptr) {
    if (!turned.empty()) {
      lock.unlock();
      Notify(turned);
      lock.lock();
    }
    cv_.wait(lock, open);
    return;
  }
  lock.unlock();
  Notify(turned);
  wait->Until([this, &open] {
    std::lock_guard<std::mutex> relock(mu_);
    return open();
  });
  lock.lock();
}

void WaveSync::ArriveReady(const std::string& member, bool ok, BarrierWait* wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!ok) MarkFailedLocked(member);
  ready_.insert(member);
  const auto turned = UpdateLocked();
  WaitAtBarrier(lock, turned, wait, [this] { return ready_.size() >= members_.size(); });
}

void WaveSync::ReportFilled(const std::string& member, bool ok) {
  std::vector<std::function<void()>> turned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ok) MarkFailedLocked(member);
    filled_.insert(member);
    turned = UpdateLocked();
    // The barriers wait on ready_ and released_ only, which a failed member's report changes
    // (MarkFailedLocked); waking every member waiting there for any other report would only make
    // them contend for the lock with the members still in their rounds.
    if (!ok) cv_.notify_all();
  }
  Notify(turned);
}

void WaveSync::ReportProofDone(const std::string& member, bool ok) {
  std::vector<std::function<void()>> turned;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!ok) MarkFailedLocked(member);
    proof_done_.insert(member);
    turned = UpdateLocked();
    if (!ok) cv_.notify_all();  // as in ReportFilled
  }
  Notify(turned);
}

std::vector<std::string> WaveSync::ArriveReleasing(const std::string& member, bool held, BarrierWait* wait) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!held) MarkFailedLocked(member);
  ready_.insert(member);  // releasing implies past the earlier steps
  filled_.insert(member);
  proof_done_.insert(member);
  released_.insert(member);
  const auto turned = UpdateLocked();
  WaitAtBarrier(lock, turned, wait, [this] { return released_.size() >= members_.size(); });
  std::vector<std::string> not_held;
  for (const std::string& m : members_) {
    if (m != member && !ok_[m]) not_held.push_back(m);
  }
  return not_held;
}

void WaveSync::Leave(const std::string& member, BarrierWait* wait) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_.count(member) != 0) return;
  }
  ArriveReleasing(member, false, wait);
}

}  // namespace wipeproof

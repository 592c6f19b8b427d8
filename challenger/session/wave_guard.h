// A session's side of its wave's barriers (wave_sync.h): arrives at each and reports its fill and
// its proof rounds exactly once, also on early returns (the destructor reports what is left as
// failed), so the other members never wait for a session that ended. Outside wave runs (no
// WaveSync) every call does nothing and the wave counts as filled and done.
//
// A session that shares its event loop with other members waits at the barriers through
// `barrier_wait` (wave_sync.h BarrierWait; null: on its own thread).
//
// Thread-safety: one per session, used on the session's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "challenger/session/wave_sync.h"

namespace wipeproof {

class WaveGuard {
 public:
  WaveGuard(WaveSync* sync, std::string member, WaveSync::BarrierWait* barrier_wait = nullptr)
      : sync_(sync), member_(std::move(member)), barrier_wait_(barrier_wait) {}
  ~WaveGuard() {
    if (sync_ == nullptr) return;
    try {
      Ready(false);
      Releasing(false);
    } catch (...) {
      // A wait on the loop failed (the loop is going away): arrive without waiting, never throw.
      WaveSync::ArriveOnlyWait arrive_only;
      if (!released_) sync_->ArriveReleasing(member_, false, &arrive_only);
    }
  }
  WaveGuard(const WaveGuard&) = delete;
  WaveGuard& operator=(const WaveGuard&) = delete;

  bool active() const { return sync_ != nullptr; }
  void Ready(bool ok) {
    if (sync_ == nullptr || ready_) return;
    ready_ = true;
    sync_->ArriveReady(member_, ok, barrier_wait_);
  }
  void Filled(bool ok) {
    if (sync_ == nullptr || filled_) return;
    filled_ = true;
    sync_->ReportFilled(member_, ok);
  }
  void ProofDone(bool ok) {
    if (sync_ == nullptr || proof_done_) return;
    proof_done_ = true;
    sync_->ReportProofDone(member_, ok);
  }
  // Fill and proof reported as failed (once) so the others stop waiting for this member.
  void Failed() {
    Filled(false);
    ProofDone(false);
  }
  bool WaveDone() const { return sync_ == nullptr || sync_->WaveDone(); }
  bool AllFilled() const { return sync_ == nullptr || sync_->AllFilled(); }
  // WaveSync::AddListener / RemoveListener; outside wave runs nothing changes: 0, and a no-op.
  uint64_t AddListener(std::function<void()> on_change) {
    return sync_ == nullptr ? 0 : sync_->AddListener(std::move(on_change));
  }
  void RemoveListener(uint64_t id) {
    if (sync_ != nullptr && id != 0) sync_->RemoveListener(id);
  }
  // Returns the members that did not hold labels throughout.
  std::vector<std::string> Releasing(bool held) {
    if (sync_ == nullptr || released_) return {};
    Ready(held);
    released_ = true;
    return sync_->ArriveReleasing(member_, held, barrier_wait_);
  }

 private:
  WaveSync* sync_;
  std::string member_;
  WaveSync::BarrierWait* barrier_wait_;
  bool ready_ = false;
  bool filled_ = false;
  bool proof_done_ = false;
  bool released_ = false;
};

}  // namespace wipeproof

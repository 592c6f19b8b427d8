// Wakes a session's kj event loop from another thread (a wave's other member, through WaveSync's
// listeners: wave_sync.h), so a session waiting for its wave sleeps until the wave changes instead of
// polling it. The session arms it before each wait (Arm: a promise to join with the wait's others)
// and disarms it after; Fire from any thread resolves the armed promise, or, when none is armed,
// makes the next Arm's promise ready at once, so a change between the session's last look and its
// wait is never missed.
//
// Thread-safety: Arm and Disarm on the thread whose event loop waits on the promise; Fire from any
// thread (it does not block beyond a short lock and never runs the loop's code).
#pragma once

#include <kj/async.h>

#include <mutex>

namespace wipeproof {

class LoopWake {
 public:
  LoopWake() = default;
  LoopWake(const LoopWake&) = delete;
  LoopWake& operator=(const LoopWake&) = delete;

  // A promise resolved by the next Fire(), or ready now when one came since the last Arm.
  // REQUIRES: disarmed (a new object, or Disarm() since the last Arm()).
  kj::Promise<void> Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    if (pending_) {
      pending_ = false;
      return kj::READY_NOW;
    }
    auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
    fulfiller_ = kj::mv(paf.fulfiller);
    fired_ = false;
    return kj::mv(paf.promise);
  }

  // After the wait that joined Arm()'s promise ended (whichever of its promises resolved).
  void Disarm() {
    kj::Own<kj::CrossThreadPromiseFulfiller<void>> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      drop = kj::mv(fulfiller_);
      fired_ = false;
    }
    // `drop` goes here, on the loop's thread, outside the lock; its promise is gone or resolved.
  }

  void Fire() {
    std::lock_guard<std::mutex> lock(mu_);
    if (fulfiller_.get() != nullptr && !fired_) {
      fulfiller_->fulfill();
      fired_ = true;
    } else if (fulfiller_.get() == nullptr) {
      pending_ = true;
    }
  }

 private:
  std::mutex mu_;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> fulfiller_;
  bool fired_ = false;    // fulfiller_ was fulfilled
  bool pending_ = false;  // a Fire() while disarmed
};

}  // namespace wipeproof

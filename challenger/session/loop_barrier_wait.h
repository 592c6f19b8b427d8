// A wave barrier's wait (wave_sync.h WaveSync::BarrierWait) for a member whose session runs as a
// fiber on an event loop shared with other members (wave_run.h TcpSessionOptions::session_loops):
// instead of blocking the thread, which would stop every other session on the loop, it waits on
// the loop until the barrier opens. The wave wakes it through a listener (the barrier's opening is
// a change WaveSync reports) by a LoopWake (loop_wake.h); it also looks again every
// kLoopBarrierRecheckUs, so a missed wake costs at most that much.
//
// Thread-safety: Until runs in a fiber of the loop whose WaitScope it was given (the fiber's own);
// the listener it adds may run on any thread.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <functional>
#include <memory>

#include "challenger/session/loop_wake.h"
#include "challenger/session/wave_sync.h"

namespace wipeproof {

constexpr uint64_t kLoopBarrierRecheckUs = 100'000;

class LoopBarrierWait final : public WaveSync::BarrierWait {
 public:
  // `wave`, `fiber_scope` (the fiber's WaitScope) and `timer` (its loop's) must outlive this object.
  LoopBarrierWait(WaveSync& wave, kj::WaitScope& fiber_scope, kj::Timer& timer)
      : wave_(wave), scope_(fiber_scope), timer_(timer) {}

  void Until(const std::function<bool()>& done) override {
    auto wake = std::make_shared<LoopWake>();
    const uint64_t id = wave_.AddListener([wake] { wake->Fire(); });
    KJ_DEFER(wave_.RemoveListener(id));
    for (;;) {
      kj::Promise<void> woken = wake->Arm();
      if (done()) {
        woken = nullptr;  // dropped before the fulfiller
        wake->Disarm();
        return;
      }
      woken.exclusiveJoin(timer_.afterDelay(kLoopBarrierRecheckUs * kj::MICROSECONDS)).wait(scope_);
      wake->Disarm();
    }
  }

 private:
  WaveSync& wave_;
  kj::WaitScope& scope_;
  kj::Timer& timer_;
};

}  // namespace wipeproof

// Keeps the sessions of one wave run in step (protocol v2), so that a node whose own rounds are
// over cannot hold a neighbour's checkpoint while the neighbour relabels the memory it freed
// (docs/threat-model.md "The claim": neighbouring nodes are wiped in the same wave):
//   1. ready: every member has drawn its challenges and computed their expected labels before any
//      order is sent, and then all orders go out at the same moment (ArriveReady);
//   2. while the wave runs, each member reports its fill (ReportFilled) and the end of its proof
//      rounds (ReportProofDone). A member sends its proof rounds only once every member reported its
//      fill (AllFilled), so all members prove at the same moment, after the wave's last fill; before
//      and after them it probes its node with holding rounds, until every member has reported both
//      (WaveDone). (The order of events, not a clock, decides "after": members may run on
//      different clocks, e.g. the selftest's simulated ones.)
//   3. release: no member frees its memory (finish or abort) before every member's rounds ended
//      (ArriveReleasing). A member that failed reports so at once (its fill or proof "not ok"), so
//      the others do not wait for it, and waits here too before aborting.
// After barrier 3 each member learns which members did not hold labels throughout (failed fill or
// failed rounds); its verdict's wave-complete assumption then does not hold.
//
// Each member calls ArriveReady once, ReportFilled and ReportProofDone at most once each, then
// ArriveReleasing once; every member must arrive at both barriers (the session runner guarantees it
// on every path; Leave covers a member that never ran). Barrier waits are bounded by the slowest
// member's own deadlines. A member on a thread of its own blocks there on the wave's condition
// variable; members that share an event loop (wave runs with session loops: each member a fiber on
// one of a few loops) pass a BarrierWait that keeps the loop running while they wait
// (loop_barrier_wait.h), or the first to arrive would stop the others on its loop from arriving.
//
// A member's rounds read AllFilled and WaveDone at every turn of its event loop: both are read
// without the lock (each only ever turns true, under it), so a wave's members never wait on one
// another there. A member waiting for either to turn true need not poll: a listener (AddListener)
// is called once each turns true, from the thread that made it so, after the lock is released (so
// waking 200 members' loops never holds up a member reporting its own state; session_run.cc wakes
// its member's event loop with it).
//
// Thread-safety: thread-safe; one object per wave run.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace wipeproof {

class WaveSync {
 public:
  // How a member waits at a barrier without blocking its thread: Until returns once `done()` holds
  // (`done` takes the wave's lock itself; Until is called without it). The wave's listeners
  // (AddListener) are called when either barrier opens, so an implementation may sleep until then.
  // One that returns before (a member that only arrives, as its loop ends) gets a partial answer
  // from ArriveReleasing.
  class BarrierWait {
   public:
    virtual ~BarrierWait() = default;
    virtual void Until(const std::function<bool()>& done) = 0;
  };

  // For a member that can no longer wait (its event loop is going away, or its wait failed): it
  // arrives and returns at once, so no other member waits for it.
  class ArriveOnlyWait final : public BarrierWait {
   public:
    void Until(const std::function<bool()>&) override {}
  };

  explicit WaveSync(std::vector<std::string> members);

  // Barrier 1. `ok`: this member is prepared and will send its order. `wait`: how to wait for the
  // others (null: block this thread).
  void ArriveReady(const std::string& member, bool ok, BarrierWait* wait = nullptr);
  // This member's node reported filled (or failed before: ok false).
  void ReportFilled(const std::string& member, bool ok);
  // This member's proof rounds are over (ok: all passed).
  void ReportProofDone(const std::string& member, bool ok);
  // Every member reported its fill and its proof rounds (or failed). Lock-free.
  bool WaveDone() const { return wave_done_.load(std::memory_order_acquire); }
  // Every member reported its fill (or failed). Lock-free.
  bool AllFilled() const { return all_filled_.load(std::memory_order_acquire); }
  // `on_change` is called each time AllFilled() or WaveDone() turns true, and when barrier 1 or 3
  // opens (every member arrived: at most four calls in all), until
  // removed; returns the id RemoveListener takes. It runs on the reporting member's thread, outside
  // the wave's lock, from a copy taken under it: it may still run once just after RemoveListener
  // returned, so whatever it touches must be kept alive by the function itself (shared ownership).
  uint64_t AddListener(std::function<void()> on_change);
  void RemoveListener(uint64_t id);
  // Barrier 3. `held`: this member filled and passed every round. Returns the members (others than
  // `member`) that did not hold labels throughout, in member order.
  // `wait` as in ArriveReady.
  std::vector<std::string> ArriveReleasing(const std::string& member, bool held, BarrierWait* wait = nullptr);
  // For a member whose session ended without arriving (an error before or outside the session
  // runner): arrives wherever it has not, as not held, and waits like ArriveReleasing. No-op for a
  // member that arrived at barrier 3.
  void Leave(const std::string& member, BarrierWait* wait = nullptr);

  size_t size() const { return members_.size(); }

 private:
  void MarkFailedLocked(const std::string& member);
  // Publishes AllFilled and WaveDone (and the barriers' state) after a change of the sets; on a
  // turn, returns the listeners to call once the lock is released (Notify).
  std::vector<std::function<void()>> UpdateLocked();
  static void Notify(const std::vector<std::function<void()>>& listeners);
  // After this member's arrival (lock held by `lock`): notifies the blocked members and the
  // listeners, then waits until `open()` holds, on `wait` or on the condition variable.
  void WaitAtBarrier(std::unique_lock<std::mutex>& lock, const std::vector<std::function<void()>>& turned,
                     BarrierWait* wait, const std::function<bool()>& open);

  const std::vector<std::string> members_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, bool> ok_;  // member -> held labels throughout (so far)
  std::set<std::string> ready_, filled_, proof_done_, released_;
  std::atomic<bool> all_filled_{false};
  std::atomic<bool> wave_done_{false};
  bool all_ready_ = false;     // barrier 1 open (under mu_)
  bool all_released_ = false;  // barrier 3 open (under mu_)
  std::map<uint64_t, std::function<void()>> listeners_;
  uint64_t next_listener_ = 1;
};

}  // namespace wipeproof

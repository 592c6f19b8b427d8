// A wave's members learn that it filled or ended without polling (challenger/session/wave_sync.h
// listeners, loop_wake.h): AllFilled and WaveDone turn true exactly when the sets say so, each
// listener is called once per turn and never after it is removed, and a LoopWake fired from another
// thread ends its loop's wait (a fire before the wait is kept for it).
#include <gtest/gtest.h>
#include <kj/async-io.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "challenger/session/loop_wake.h"
#include "challenger/session/wave_guard.h"
#include "challenger/session/wave_sync.h"

namespace wipeproof {
namespace {

TEST(WaveSyncListenerTest, CalledOnceWhenTheWaveFillsAndOnceWhenItIsDone) {
  WaveSync wave({"a", "b", "c"});
  std::vector<std::string> seen;
  const uint64_t id = wave.AddListener(
      [&] { seen.push_back(std::string(wave.AllFilled() ? "filled" : "-") + (wave.WaveDone() ? "+done" : "")); });
  wave.ReportFilled("a", true);
  wave.ReportProofDone("a", true);
  wave.ReportFilled("b", true);
  EXPECT_FALSE(wave.AllFilled());
  EXPECT_TRUE(seen.empty());
  wave.ReportFilled("c", true);  // the last fill
  EXPECT_TRUE(wave.AllFilled());
  EXPECT_FALSE(wave.WaveDone());
  ASSERT_EQ(seen, std::vector<std::string>({"filled"}));
  wave.ReportProofDone("b", true);
  EXPECT_EQ(seen.size(), 1u);
  wave.ReportProofDone("c", false);  // a failed member counts as done
  EXPECT_TRUE(wave.WaveDone());
  ASSERT_EQ(seen, std::vector<std::string>({"filled", "filled+done"}));
  // Nothing turns any more: no further call, and a removed listener is never called.
  wave.RemoveListener(id);
  wave.ReportProofDone("a", true);
  EXPECT_EQ(seen.size(), 2u);
}

TEST(WaveSyncListenerTest, AFailedMemberFillsAndEndsAtOnce) {
  WaveSync wave({"a", "b"});
  int calls = 0;
  wave.AddListener([&] { ++calls; });
  wave.ReportFilled("a", true);
  wave.ReportProofDone("a", true);
  EXPECT_EQ(calls, 0);
  wave.ReportFilled("b", false);  // b failed: filled and proof-done together, one turn of both
  EXPECT_TRUE(wave.AllFilled());
  EXPECT_TRUE(wave.WaveDone());
  EXPECT_EQ(calls, 1);
}

TEST(WaveSyncListenerTest, NoWaveGuardOutsideWaveRuns) {
  WaveGuard lone(nullptr, "a");
  EXPECT_TRUE(lone.AllFilled());
  EXPECT_TRUE(lone.WaveDone());
  EXPECT_EQ(lone.AddListener([] { FAIL() << "no wave, no listener"; }), 0u);
  lone.RemoveListener(0);
}

// Which of a wait's promises ended it: the wake, or the (long) timer.
enum class Ended { kWake, kTimer };

Ended WaitWake(LoopWake& wake, kj::AsyncIoContext& io) {
  Ended ended = Ended::kTimer;
  wake.Arm()
      .then([&] { ended = Ended::kWake; })
      .exclusiveJoin(io.provider->getTimer().afterDelay(60 * kj::SECONDS))
      .wait(io.waitScope);
  wake.Disarm();
  return ended;
}

TEST(LoopWakeTest, AFireFromAnotherThreadEndsTheWait) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  LoopWake wake;
  std::atomic<bool> armed{false};
  kj::Promise<void> waiting = wake.Arm().then([&] {});
  std::thread firer([&] {
    while (!armed.load()) std::this_thread::yield();
    wake.Fire();
  });
  Ended ended = Ended::kTimer;
  armed = true;
  waiting.then([&] { ended = Ended::kWake; })
      .exclusiveJoin(io.provider->getTimer().afterDelay(60 * kj::SECONDS))
      .wait(io.waitScope);
  wake.Disarm();
  firer.join();
  EXPECT_EQ(ended, Ended::kWake);
}

TEST(LoopWakeTest, AFireBeforeTheWaitIsKeptForIt) {
  kj::AsyncIoContext io = kj::setupAsyncIo();
  LoopWake wake;
  std::thread([&] { wake.Fire(); }).join();
  EXPECT_EQ(WaitWake(wake, io), Ended::kWake);
  // Consumed: the next wait is not ended by that fire (its timer ends it).
  Ended ended = Ended::kTimer;
  wake.Arm()
      .then([&] { ended = Ended::kWake; })
      .exclusiveJoin(io.provider->getTimer().afterDelay(1 * kj::MILLISECONDS))
      .wait(io.waitScope);
  wake.Disarm();
  EXPECT_EQ(ended, Ended::kTimer);
}

TEST(LoopWakeTest, AWaveListenerWakesAnotherMembersLoop) {
  WaveSync wave({"a", "b"});
  kj::AsyncIoContext io = kj::setupAsyncIo();
  LoopWake wake;
  const uint64_t id = wave.AddListener([&] { wake.Fire(); });
  wave.ReportFilled("a", true);
  std::thread other([&] { wave.ReportFilled("b", true); });  // the wave's last fill, on b's thread
  EXPECT_EQ(WaitWake(wake, io), Ended::kWake);
  other.join();
  EXPECT_TRUE(wave.AllFilled());
  wave.RemoveListener(id);
}

}  // namespace
}  // namespace wipeproof

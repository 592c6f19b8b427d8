#include "prover/agent/round_polling.h"

#include <glog/logging.h>

#include <chrono>

namespace wipeproof {
namespace {

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void RunAgentEventLoop(kj::Promise<void> done, kj::WaitScope& wait_scope, kj::Timer& timer, const AgentCore& core,
                       const RoundPollingOptions& options, RoundPollingStats* stats) {
  RoundPollingStats local;
  RoundPollingStats& s = stats != nullptr ? *stats : local;
  bool finished = false;
  kj::Promise<void> watched = done.then([&finished]() { finished = true; }).eagerlyEvaluate(nullptr);
  // The session phase whose polling ran out (max_poll_us): not polled again until it changes.
  std::string capped_session;
  while (!finished) {
    const std::string answering = options.enabled ? core.AnsweringRounds() : std::string();
    if (answering.empty()) capped_session.clear();
    if (!answering.empty() && answering != capped_session) {
      s.polling.store(true);
      s.poll_periods.fetch_add(1);
      const int64_t start = NowUs();
      int64_t now = start;
      // Checks the session's state every 64 polls (a lock of the core's mutex); time every poll.
      for (uint32_t n = 0; !finished; ++n) {
        wait_scope.poll();
        now = NowUs();
        if (now - start >= options.max_poll_us) {
          capped_session = answering;
          break;
        }
        if (n % 64 == 63 && core.AnsweringRounds() != answering) break;
      }
      s.polled_us.fetch_add(static_cast<uint64_t>(now - start));
      s.polling.store(false);
      if (capped_session == answering) {
        s.capped.fetch_add(1);  // after polling is false: a reader that sees the count sees it stopped
        LOG(INFO) << "round polling: " << answering << " still answers rounds after " << (now - start) / 1000
                  << " ms of polling; sleeping between its rounds from now on";
      }
      continue;
    }
    const int64_t tick = core.HasSession() ? options.session_tick_us : options.idle_tick_us;
    timer.afterDelay(tick * kj::MICROSECONDS).wait(wait_scope);
  }
}

}  // namespace wipeproof

// The agent's event loop, run so that rounds are answered the moment they arrive: while a session
// answers rounds (AgentCore::AnsweringRounds: a device of it has its fill notice and it is not
// ending), the loop polls for I/O without sleeping (kj::WaitScope::poll, a non-blocking epoll), so
// a round's bytes are read without the kernel first waking a sleeping thread (tens of microseconds
// on a loaded or power-saving machine, more in a virtual machine). Otherwise it sleeps in epoll as
// usual, looking at the session's state every `session_tick_us` while a session exists and every
// `idle_tick_us` while none does.
//
// Bounds (the busy-wait never outlives its session): polling stops as soon as the session ends
// (finish, abort, disconnect, timeout, protocol error: AnsweringRounds turns empty) and after
// `max_poll_us` of one phase of a session: its holding rounds (from its first fill notice; a wave's
// members hold until the wave's last fill, which may be minutes) and its proof rounds (from the
// first proof-shaped round on, with a budget of their own, so that a long holding phase never
// leaves the proof rounds, the ones the verdict counts, unpolled beyond the first). Its CPU cost:
// one core at 100% while it polls, at most 2 x max_poll_us per session (60 s by default; the proof
// rounds themselves take milliseconds). It wants a core of its own: `serve --round_polling=auto`
// polls only where one is likely (spare_core.h).
//
// Thread-safety: RunAgentEventLoop runs on the event loop's thread; `stats` may be read from others.
#pragma once

#include <kj/async.h>
#include <kj/timer.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "prover/agent/agent_core.h"
#include "prover/agent/spare_core.h"

namespace wipeproof {

struct RoundPollingOptions {
  bool enabled = true;                   // false: always sleep in epoll (the loop before polling)
  int64_t max_poll_us = 60'000'000;      // most polling per session
  int64_t session_tick_us = 1'000;       // state checks while a session fills or rounds are not polled
  int64_t idle_tick_us = 50'000;         // state checks while no session runs
};

struct RoundPollingStats {
  std::atomic<bool> polling{false};        // polling now
  std::atomic<uint64_t> poll_periods{0};   // times polling started
  std::atomic<uint64_t> polled_us{0};      // microseconds spent polling, all periods
  std::atomic<uint64_t> capped{0};         // periods stopped by max_poll_us rather than the session's end
};

// Runs the event loop until `done` resolves (a signal, a test's promise), polling as above.
void RunAgentEventLoop(kj::Promise<void> done, kj::WaitScope& wait_scope, kj::Timer& timer, const AgentCore& core,
                       const RoundPollingOptions& options, RoundPollingStats* stats = nullptr);

}  // namespace wipeproof

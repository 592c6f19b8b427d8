// Runs many sessions on a few event loops (issue 23 "Fleet scale"): `loops` threads, each with one
// kj event loop, on which its share of the sessions (session i on loop i % loops) run as kj fibers
// (kj/async.h startFiber), each in the blocking style of SessionRunner on its fiber's own WaitScope.
// A session waiting for an answer, a timer or its wave lets the loop run the others' events; its
// synchronous work (building a round, checking an answer, signing, a ledger append) holds up the
// other sessions of its loop for as long as it takes. Against a thread per session this trades the
// scheduler's switches between hundreds of threads (and their cold caches) for that queue: on a
// machine with fewer cores than sessions, one loop a core keeps each round's work on a warm core.
//
// A session on a shared loop must not block its thread: its connector waits on the fiber's scope
// (tcp_agent_connector.h), its wave's barriers on the loop (loop_barrier_wait.h), and
// SessionEnv::thread_shared is set (its thread's CPU is the loop's, added to `costs` whole).
//
// Thread-safety: RunOnSessionLoops blocks until every session ended; `run` is called once per
// session, on its loop's thread, inside its fiber, and must not throw (what escapes is lost:
// the caller records it).
#pragma once

#include <kj/async-io.h>

#include <cstddef>
#include <functional>
#include <string>

#include "challenger/session/round_costs.h"

namespace wipeproof {

// A fiber's stack: reserved whole, its pages taken as the session first touches them (signing, the
// ledger's SQLite appends and its waits run on it; answers' continuations and TLS on the loop's own
// stack). A whole wave also ran with 128 KiB (load test, 2026-12-05): eight times that here.
constexpr size_t kSessionFiberStackBytes = size_t{1} << 20;

// Session `index` of RunOnSessionLoops, run on `io`'s loop inside its fiber (`fiber_scope`).
using SessionOnLoop = std::function<void(size_t index, kj::AsyncIoContext& io, kj::WaitScope& fiber_scope)>;

// A session whose loop failed before its fiber ran (`why`: the loop's error); called on the loop's
// thread, outside any fiber, after the loop is gone: it must not wait for the other sessions.
using SessionNotRun = std::function<void(size_t index, const std::string& why)>;

// Runs sessions 0..count-1 on min(loops, count) threads (loops >= 1) and returns once all ended.
// A loop that fails (it cannot be set up, or a fiber's stack cannot be had) reports each of its
// sessions that never started to `not_run` (may be empty). `costs` (may be null) gets each loop
// thread's CPU (RoundCostStats::AddSharedThreadCpu). `fiber_stack_bytes`: each fiber's stack (tests
// ask for one no machine can give, to see a loop fail).
void RunOnSessionLoops(size_t count, int loops, const SessionOnLoop& run, const SessionNotRun& not_run,
                       RoundCostStats* costs, size_t fiber_stack_bytes = kSessionFiberStackBytes);

}  // namespace wipeproof

#include "challenger/session/session_loops.h"

#include <glog/logging.h>
#include <kj/vector.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace wipeproof {

namespace {

// One loop thread: its sessions started as fibers together, then the loop runs until all ended.
void RunLoop(const std::vector<size_t>& sessions, const SessionOnLoop& run, const SessionNotRun& not_run,
             RoundCostStats* costs, size_t stack_bytes) {
  const uint64_t cpu_start_ns = ThreadRusageCpuNs();
  std::vector<char> started(sessions.size(), 0);
  std::string error;
  try {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    kj::Vector<kj::Promise<void>> fibers(sessions.size());
    for (size_t k = 0; k < sessions.size(); ++k) {
      fibers.add(kj::startFiber(stack_bytes, [&run, &io, &started, &sessions, k](kj::WaitScope& scope) {
        started[k] = 1;
        run(sessions[k], io, scope);
      }));
    }
    kj::joinPromises(fibers.releaseAsArray()).wait(io.waitScope);
  } catch (const kj::Exception& e) {
    error = e.getDescription().cStr();  // not expected: `run` catches its session's own failures
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (!error.empty()) {
    LOG(ERROR) << "session loop: " << error;
    for (size_t k = 0; k < sessions.size(); ++k) {
      if (!started[k] && not_run) not_run(sessions[k], error);
    }
  }
  if (costs != nullptr) costs->AddSharedThreadCpu(ThreadRusageCpuNs() - cpu_start_ns);
}

}  // namespace

void RunOnSessionLoops(size_t count, int loops, const SessionOnLoop& run, const SessionNotRun& not_run,
                       RoundCostStats* costs, size_t fiber_stack_bytes) {
  if (count == 0) return;
  const size_t threads = std::min(count, static_cast<size_t>(std::max(1, loops)));
  std::vector<std::vector<size_t>> share(threads);
  for (size_t i = 0; i < count; ++i) share[i % threads].push_back(i);
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (size_t t = 0; t < threads; ++t)
    workers.emplace_back([&, t] { RunLoop(share[t], run, not_run, costs, fiber_stack_bytes); });
  for (std::thread& w : workers) w.join();
}

}  // namespace wipeproof

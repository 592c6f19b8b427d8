#include "challenger/session/session_loops.h"

#include <glog/logging.h>
#include <kj/vector.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace wipeproof {

namespace {

// One loop thread: its sessions started as fibers together, then the loop runs until all ended.
void RunLoop(const std::vector<size_t>& sessions, const SessionOnLoop& run, RoundCostStats* costs) {
  const uint64_t cpu_start_ns = ThreadRusageCpuNs();
  try {
    kj::AsyncIoContext io = kj::setupAsyncIo();
    kj::Vector<kj::Promise<void>> fibers(sessions.size());
    for (size_t index : sessions) {
      fibers.add(kj::startFiber(kSessionFiberStackBytes,
                                [&run, &io, index](kj::WaitScope& fiber_scope) { run(index, io, fiber_scope); }));
    }
    kj::joinPromises(fibers.releaseAsArray()).wait(io.waitScope);
  } catch (const kj::Exception& e) {
    // Not expected: `run` catches its session's own failures.
    LOG(ERROR) << "session loop: " << e.getDescription().cStr();
  } catch (const std::exception& e) {
    LOG(ERROR) << "session loop: " << e.what();
  }
  if (costs != nullptr) costs->AddSharedThreadCpu(ThreadRusageCpuNs() - cpu_start_ns);
}

}  // namespace

void RunOnSessionLoops(size_t count, int loops, const SessionOnLoop& run, RoundCostStats* costs) {
  if (count == 0) return;
  const size_t threads = std::min(count, static_cast<size_t>(std::max(1, loops)));
  std::vector<std::vector<size_t>> share(threads);
  for (size_t i = 0; i < count; ++i) share[i % threads].push_back(i);
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (size_t t = 0; t < threads; ++t) workers.emplace_back([&, t] { RunLoop(share[t], run, costs); });
  for (std::thread& w : workers) w.join();
}

}  // namespace wipeproof

// Threads for calls that block (AgentCore::StartSession runs for the whole fill) so that the RPC
// event loop keeps serving status, abort and other connections meanwhile. Finished threads are
// joined when the next one starts; the destructor joins the rest.
//
// Thread-safety: Start() and running() may be called from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace wipeproof {

class WorkerThreads {
 public:
  WorkerThreads() = default;
  // Joins every thread: whatever they run must be able to finish (the agent ends its sessions first).
  ~WorkerThreads();
  WorkerThreads(const WorkerThreads&) = delete;
  WorkerThreads& operator=(const WorkerThreads&) = delete;

  // Runs `fn()` on a new thread. `fn` may be move-only.
  template <typename Fn>
  void Start(Fn&& fn) {
    auto task = std::make_shared<std::decay_t<Fn>>(std::forward<Fn>(fn));
    StartTask([task] { (*task)(); });
  }

  // Threads started and not yet finished.
  size_t running() const;
  // Threads started since construction.
  size_t started() const;

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<bool> done;  // guarded by mu_
  };
  void StartTask(std::function<void()> task);
  void ReapLocked();

  mutable std::mutex mu_;
  std::list<Worker> workers_;  // guarded by mu_
  size_t started_ = 0;         // guarded by mu_
};

}  // namespace wipeproof

#include "prover/agent/worker_threads.h"

namespace wipeproof {

WorkerThreads::~WorkerThreads() {
  std::list<Worker> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(workers_);
  }
  for (Worker& w : all) w.thread.join();
}

void WorkerThreads::StartTask(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(mu_);
  ReapLocked();
  auto done = std::make_shared<bool>(false);
  workers_.push_back(Worker{std::thread([this, task = std::move(task), done] {
                              task();
                              std::lock_guard<std::mutex> lock(mu_);
                              *done = true;
                            }),
                            done});
  ++started_;
}

void WorkerThreads::ReapLocked() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (*it->done) {
      it->thread.join();  // it has finished: this returns at once
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t WorkerThreads::started() const {
  std::lock_guard<std::mutex> lock(mu_);
  return started_;
}

size_t WorkerThreads::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (const Worker& w : workers_) n += !*w.done;
  return n;
}

}  // namespace wipeproof

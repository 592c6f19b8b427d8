// Expected labels: the challenger's own answers to every batch of a session's challenges
// (challenges.h), computed from the seed with the batched SIMD verifier (kernels/chunk_verifier.h
// RecomputeLabels) on a worker thread.
//
// Two phases. Before the order (Wait()): every proof and holding batch and the first
// LookaheadBatches() occupancy batches, so a device is challenged the moment it reports filled (no
// window between a fill notice and its first round). During the session: the remaining occupancy
// batches, in send order, a group at a time, kept between one and two groups ahead of the last one
// the session asked for (AskFor). So an occupancy window of an hour costs its chunks while it runs,
// spread over the window, not all before the order; and a window a failure ends early costs only
// what it used. A batch not yet computed when its round is due is reported by BatchReady(); the
// session waits for it, and the wait counts against the window (occupancy_bound.h: unprotected time).
// The second phase runs while rounds are timed, so it yields to the session: one thread fewer than
// the first (at least one) and its worker's nice value raised by kSecondPhaseNiceIncrement
// (setpriority on the worker thread; RecomputeLabels's threads inherit it). A batch computed late
// only delays its round and weakens the statement (unprotected time); an answer checked late would
// make an honest node's round look late.
//
// Layout of Batch(d, b): 32 bytes per index of that batch, in send order: exactly that device's
// part of a RoundAnswer's labels, so an answer is checked with one comparison per label. Every
// batch lives in one SecretBuffer (secret_buffer.h: locked, kept out of core dumps, zeroed when this
// object goes), allocated whole at the start, and so does the worker's scratch.
//
// Work: one chunk graph per distinct chunk per device and phase (or occupancy group): a chunk asked
// in several batches is computed once when it falls in the same work unit; units are cut at chunk
// boundaries of the sorted indices. Cancellation is checked between units of ~32 chunks per thread.
//
// Thread-safety: Start() launches the worker; Wait(), AskFor(), BatchReady(), WorkerStatus() and
// Batch() are for the one thread that runs the session (AskFor and BatchReady may be called from
// any thread). The destructor cancels and joins the worker.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "challenger/session/challenges.h"
#include "challenger/session/secret_buffer.h"
#include "common/status.h"
#include "kernels/label_spec.h"

namespace wipeproof {

struct ExpectedLabelsSpec {
  RegionSpec session;                   // format, seed, m (first and count unused)
  std::vector<ChallengeRange> devices;  // ranges, plan order (as given to GenerateChallenges)
  int threads = 0;                      // RecomputeLabels threads; 0 = all cores
  // Tests only: the worker sleeps this long before computing (a challenger slower than the fill).
  uint64_t test_delay_us = 0;
  // Called on the worker thread after each work unit of the first phase with (labels computed,
  // labels of the first phase) over all devices, the last call with done == total; may be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
  // Tests: called on the worker thread as the second phase starts (after its priority is lowered),
  // with the threads it computes on; may be empty.
  std::function<void(int threads)> second_phase_started;
};

// How much the second phase raises its worker's nice value (capped at 19 by the kernel).
inline constexpr int kSecondPhaseNiceIncrement = 10;

class ExpectedLabels {
 public:
  // Starts computing `challenges` (which must outlive this object).
  static std::unique_ptr<ExpectedLabels> Start(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges);
  ~ExpectedLabels();
  ExpectedLabels(const ExpectedLabels&) = delete;
  ExpectedLabels& operator=(const ExpectedLabels&) = delete;

  // The first phase is done (true also when it failed).
  bool ready() const;
  // Blocks until the first phase is done; its status (INVALID_ARGUMENT from RecomputeLabels,
  // RESOURCE_EXHAUSTED when the memory for the labels could not be mapped, or FAILED_PRECONDITION
  // "cancelled"). Idempotent.
  Status Wait();
  // Occupancy batches computed ahead: the first phase computes this many; afterwards the worker
  // computes half of it at a time (a group) until it is this many past the last AskFor. 0 without
  // occupancy batches.
  uint32_t LookaheadBatches() const { return lookahead_; }
  // The session is about to send `batch` (an occupancy batch; others are computed already): the
  // worker computes on to LookaheadBatches() past it. Never blocks.
  void AskFor(uint32_t batch);
  // Whether every device's labels of `batch` are computed (Batch may be read). Every batch of the
  // first phase is once Wait() returned OK.
  bool BatchReady(uint32_t batch) const { return batch < ready_batches_.load(std::memory_order_acquire); }
  // OK while the worker works or finished every batch; its error when it stopped early (a batch
  // past that point never becomes ready).
  Status WorkerStatus() const;
  // REQUIRES: BatchReady(batch). Indices(device, batch).size() * 32 bytes.
  const uint8_t* Batch(size_t device, uint32_t batch) const { return labels_.data() + offsets_[device][batch]; }

 private:
  ExpectedLabels(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges);
  void Work();
  // Every device's labels of batches [first, end) on `threads` threads; `progress` reports to
  // spec_.progress.
  Status ComputeBatches(uint32_t first, uint32_t end, int threads, bool progress);
  void Finish(Status status);

  ExpectedLabelsSpec spec_;
  const ChallengeSet& challenges_;
  int threads_ = 1;
  uint32_t group_ = 0;      // occupancy batches per worker step in the second phase
  uint32_t lookahead_ = 0;  // 2 * group_ (0 without occupancy batches)
  uint32_t first_phase_end_ = 0;
  SecretBuffer labels_;                       // every batch, device by device, in send order
  std::vector<std::vector<size_t>> offsets_;  // [device][batch]: where the batch starts in labels_
  std::atomic<bool> cancel_{false};
  std::atomic<uint32_t> ready_batches_{0};  // batches [0, this) computed
  mutable std::mutex mu_;
  std::condition_variable changed_;
  bool first_phase_done_ = false;  // guarded by mu_
  uint32_t wanted_batches_ = 0;    // guarded by mu_: the worker computes while ready < this
  Status status_;                  // guarded by mu_ (allocation failure set by the constructor)
  std::thread worker_;
};

}  // namespace wipeproof

// Expected labels: the challenger's own answers to every batch of a session's challenges
// (challenges.h), computed from the seed with the batched SIMD verifier (kernels/chunk_verifier.h
// RecomputeLabels) on a worker thread. The session runner computes them all before it sends the
// order, so a device is challenged the moment it reports filled (no window between a fill notice
// and its first round).
//
// Layout of Batch(d, b): 32 bytes per index of that batch, in send order: exactly that device's
// part of a RoundAnswer's labels, so an answer is checked with one comparison per label. Every
// batch lives in one SecretBuffer (secret_buffer.h: locked, kept out of core dumps, zeroed when this
// object goes), and so does the worker's scratch.
//
// Work: one chunk graph per distinct chunk per device (a chunk asked in several batches is
// computed once when it falls in the same work unit; units are cut at chunk boundaries of the
// sorted indices). Cancellation is checked between units of ~32 chunks per thread.
//
// Thread-safety: Start() launches the worker; Wait() and the accessors are for the one thread that
// runs the session. The destructor cancels and joins the worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
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
  // Called on the worker thread after each work unit with (labels computed, labels in all) over all
  // devices, the last call with done == total; may be empty.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

class ExpectedLabels {
 public:
  // Starts computing every round of `challenges` (which must outlive this object).
  static std::unique_ptr<ExpectedLabels> Start(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges);
  ~ExpectedLabels();
  ExpectedLabels(const ExpectedLabels&) = delete;
  ExpectedLabels& operator=(const ExpectedLabels&) = delete;

  bool ready() const { return done_.load(std::memory_order_acquire); }
  // Blocks until the worker finished; its status (INVALID_ARGUMENT from RecomputeLabels,
  // RESOURCE_EXHAUSTED when the memory for the labels could not be mapped, or FAILED_PRECONDITION
  // "cancelled"). Idempotent.
  Status Wait();
  // REQUIRES: Wait() returned OK. Indices(device, batch).size() * 32 bytes.
  const uint8_t* Batch(size_t device, uint32_t batch) const { return labels_.data() + offsets_[device][batch]; }

 private:
  ExpectedLabels(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges);
  void Work();
  Status Compute();

  ExpectedLabelsSpec spec_;
  const ChallengeSet& challenges_;
  SecretBuffer labels_;                       // every batch, device by device, in send order
  std::vector<std::vector<size_t>> offsets_;  // [device][batch]: where the batch starts in labels_
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  Status status_;
  std::thread worker_;
};

}  // namespace wipeproof

// Expected labels: the challenger's own answers to every round, computed from the seed with the
// batched SIMD verifier (kernels/chunk_verifier.h RecomputeLabels) on a worker thread that starts
// when the order is sent, so the work overlaps the prover's fill (design-brief.md step 3). The
// session waits for it only when the fill finished first.
//
// Layout of Round(r): exactly the RoundAnswer.labels layout, 32 bytes per index, devices in plan
// order, indices in send order; so an answer is checked with one comparison per label.
//
// Work: one chunk graph per distinct chunk per device (a chunk asked in several rounds is computed
// once when it falls in the same batch; batches are cut at chunk boundaries of the sorted indices).
// Cancellation is checked between batches of ~32 chunks per thread.
//
// Thread-safety: Start() launches the worker; Wait() and the accessors are for the one thread that
// runs the session. The destructor cancels and joins the worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "challenger/session/challenges.h"
#include "common/status.h"
#include "kernels/label_spec.h"

namespace wipeproof {

struct ExpectedLabelsSpec {
  RegionSpec session;                   // format, seed, m (first and count unused)
  std::vector<ChallengeRange> devices;  // ranges, plan order (as given to GenerateChallenges)
  int threads = 0;                      // RecomputeLabels threads; 0 = all cores
  // Tests only: the worker sleeps this long before computing (a challenger slower than the fill).
  uint64_t test_delay_us = 0;
};

class ExpectedLabels {
 public:
  // Starts computing every round of `challenges` (which must outlive this object).
  static std::unique_ptr<ExpectedLabels> Start(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges);
  ~ExpectedLabels();
  ExpectedLabels(const ExpectedLabels&) = delete;
  ExpectedLabels& operator=(const ExpectedLabels&) = delete;

  bool ready() const { return done_.load(std::memory_order_acquire); }
  // Blocks until the worker finished; its status (INVALID_ARGUMENT from RecomputeLabels, or
  // FAILED_PRECONDITION "cancelled"). Idempotent.
  Status Wait();
  // REQUIRES: Wait() returned OK. LabelsPerRound() * 32 bytes.
  const uint8_t* Round(uint32_t round) const { return rounds_[round].data(); }

 private:
  ExpectedLabels(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges);
  void Work();
  Status Compute();

  ExpectedLabelsSpec spec_;
  const ChallengeSet& challenges_;
  std::vector<std::vector<uint8_t>> rounds_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> done_{false};
  Status status_;
  std::thread worker_;
};

}  // namespace wipeproof

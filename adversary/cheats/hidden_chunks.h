// Adversary 1 (DeviationKind::kHideChunks): keeps some chunks of every device unlabeled, to use
// that memory for something else, and answers a label there as Deviation::hidden_answer says:
// (a) recomputed on demand (correct, its time charged to the simulated clock: ceil(k / cores) *
// SimTiming::recompute_chunk_ps for the k hidden chunks one round asked), (b) random bytes, (c) the
// label of the same index under an earlier session's seed, or zeros. Which chunks: hidden_fraction
// of them at Deviation::placement (contiguous or random), or every stride-th one.
#pragma once

#include <cstdint>
#include <set>
#include <utility>

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class HideChunks final : public Cheat {
 public:
  HideChunks(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}

  void OnFilled() override;
  bool AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) override;
  void OnAnswer(uint32_t round, proto::RoundAnswer::Builder answer) override;

 private:
  const Deviation& deviation_;
  CheatTools tools_;
  std::set<std::pair<size_t, uint64_t>> recomputed_;  // (device, chunk) this round, for the charge
};

}  // namespace wipeproof::adversary

// Adversary 7f (DeviationKind::kEarlyFillReport): reports (and notices) every device filled while
// Deviation::hidden_fraction of its chunks, chosen at random, are not written yet; they are written
// Deviation::advance_us of simulated time after the report. A label asked there before then answers
// zeros (and counts in AgentLog::hidden_chunks_challenged); after, its label.
#pragma once

#include <cstdint>

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class EarlyFillReport final : public Cheat {
 public:
  EarlyFillReport(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}

  void OnFilled() override;
  bool AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) override;

 private:
  const Deviation& deviation_;
  CheatTools tools_;
  int64_t written_at_us_ = 0;  // monotonic: when the pending chunks exist
};

}  // namespace wipeproof::adversary

// Adversary 5 (DeviationKind::kDedup): stores one copy for two devices. Deviation::dedup_chunks
// contiguous chunks of device 1 (all of them when 0) are left unlabeled and answered from device 0's
// labels at the same chunk offset: labels that are there, but of other indices.
#pragma once

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class Dedup final : public Cheat {
 public:
  Dedup(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}

  void OnFilled() override;
  bool AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) override;

 private:
  const Deviation& deviation_;
  CheatTools tools_;
};

}  // namespace wipeproof::adversary

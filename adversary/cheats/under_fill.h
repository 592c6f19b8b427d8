// Adversary 4: fills Deviation::short_chunks chunks fewer on the last device (its last chunks stay
// unlabeled and answer zeros) and has the fill report explain the gap, with Deviation::note (a
// default when empty) as the report's note for that device:
//   (a) DeviationKind::kUnderfillHeldByOthers: as memory held by other processes;
//   (b) DeviationKind::kUnderfillInflatedReserve: as a larger reserve than the order allowed.
#pragma once

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class UnderFill final : public Cheat {
 public:
  enum class Excuse { kHeldByOthers, kLargerReserve };

  UnderFill(const Deviation& deviation, CheatTools tools, Excuse excuse)
      : deviation_(deviation), tools_(tools), excuse_(excuse) {}

  void OnFilled() override;
  void OnReportFacts(std::vector<proto::DeviceFillFacts>* facts) override;

 private:
  const Deviation& deviation_;
  CheatTools tools_;
  Excuse excuse_;
};

}  // namespace wipeproof::adversary

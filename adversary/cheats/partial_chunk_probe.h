// Adversary 7e (DeviationKind::kPartialChunkProbe): probes for a plan with a partial chunk. A
// trailing partial chunk of a 192 plan would be a shallow graph, cheap to recompute, so this agent
// leaves the trailing partial chunk of any device range that is not whole chunks unlabeled (it
// answers zeros there). The challenger must never plan one; AgentLog::partial_chunk_ranges counts
// them (for every agent).
#pragma once

#include "adversary/cheats/cheat.h"

namespace wipeproof::adversary {

class PartialChunkProbe final : public Cheat {
 public:
  explicit PartialChunkProbe(CheatTools tools) : tools_(tools) {}
  void OnFilled() override;

 private:
  CheatTools tools_;
};

}  // namespace wipeproof::adversary

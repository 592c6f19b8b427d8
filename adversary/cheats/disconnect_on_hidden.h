// Adversary 7g (DeviationKind::kDisconnectOnHidden): keeps Deviation::hidden_fraction of every
// device's chunks (at random) unlabeled and, rather than answer a round that asks for one of them,
// cuts the connection (Deviation::disconnect) and never answers, hoping to be run again with fresh
// draws.
#pragma once

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class DisconnectOnHidden final : public Cheat {
 public:
  DisconnectOnHidden(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}

  void OnFilled() override;
  Interception OnChallenge(const Challenge& asked, std::vector<std::vector<uint64_t>>* answered) override;

 private:
  const Deviation& deviation_;
  CheatTools tools_;
};

}  // namespace wipeproof::adversary

// Timing faults (they need a simulated clock, CheatingAgentOptions::sim_clock): the clock moves
// Deviation::advance_us more than the honest agent's
//   LateFill (DeviationKind::kLateFill): during the fill (startSession);
//   LateRound (DeviationKind::kLateRound): during round Deviation::round.
#pragma once

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class LateFill final : public Cheat {
 public:
  LateFill(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}
  void OnFilled() override { tools_.clock->Charge(deviation_.advance_us); }

 private:
  const Deviation& deviation_;
  CheatTools tools_;
};

class LateRound final : public Cheat {
 public:
  LateRound(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}
  void OnAnswer(uint32_t round, proto::RoundAnswer::Builder /*answer*/) override {
    if (round == deviation_.round) tools_.clock->Charge(deviation_.advance_us);
  }

 private:
  const Deviation& deviation_;
  CheatTools tools_;
};

}  // namespace wipeproof::adversary

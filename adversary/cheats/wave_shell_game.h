// Adversary 10 (DeviationKind::kDropAfterRounds), the wave shell game: after answering
// Deviation::round rounds (the count it expects before the proof rounds, as a v1 order disclosed),
// drops Deviation::hidden_fraction of every device's chunks (at random; they answer zeros) to make
// room for a neighbour's checkpoint, and calls Deviation::on_drop once (the neighbour then
// relabels). With hidden_fraction 0 it drops nothing and is an honest member that still signals its
// drop (10a).
#pragma once

#include <cstdint>

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class WaveShellGame final : public Cheat {
 public:
  WaveShellGame(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}

  void OnRoundDone(const Challenge& asked, proto::RoundAnswer::Reader answer) override;
  void OnSessionEnd() override { rounds_answered_ = 0; }

 private:
  const Deviation& deviation_;
  CheatTools tools_;
  uint32_t rounds_answered_ = 0;  // this session
};

}  // namespace wipeproof::adversary

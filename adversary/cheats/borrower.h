// Adversary 11 (DeviationKind::kBorrowBetweenRounds), the borrower: a node asked to hold its labels
// through an occupancy window (challenger/session/occupancy_bound.h) that frees part of its memory
// between rounds, for other work, and relabels before it guesses the next round comes. From its
// first occupancy round on (the shape the order names: every device at its occupancyLabels), right
// after each occupancy answer it drops Deviation::hidden_fraction of every device's chunks (chosen
// at random; they answer zeros) and stays short for Deviation::borrow_us of its clock; the first
// round that arrives later finds them relabelled (computed again, for real, from the session's key
// material: the relabel time is part of borrow_us). borrow_us 0 borrows for good. A round that
// arrives while it is short asks each device's o_d labels, each missing with the dropped fraction:
// the occupancy statement's d(b) is the least chance such a round is caught.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "adversary/cheats/cheat.h"
#include "adversary/deviation.h"

namespace wipeproof::adversary {

class Borrower final : public Cheat {
 public:
  Borrower(const Deviation& deviation, CheatTools tools) : deviation_(deviation), tools_(tools) {}

  Interception OnRound(uint32_t round) override;
  void OnRoundDone(const Challenge& asked, proto::RoundAnswer::Reader answer) override;
  void OnSessionEnd() override;

 private:
  bool IsOccupancyRound(const Challenge& asked) const;
  void Relabel();

  const Deviation& deviation_;
  CheatTools tools_;
  std::vector<std::pair<size_t, uint64_t>> dropped_;  // (device, chunk) short now
  int64_t dropped_at_us_ = 0;
};

}  // namespace wipeproof::adversary

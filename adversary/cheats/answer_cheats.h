// Adversary 7, the round answers: an agent that holds every label but answers a round otherwise
// than it was asked.
//   ReplayAnswer (DeviationKind::kReplayAnswer, 7a): round r >= 1 answered with round r-1's answer
//     message, verbatim.
//   AnswerOtherRoundIndices (DeviationKind::kOtherRoundIndices, 7b): round r >= 1 answered with the
//     correct labels of round r-1's indices under round r's header.
//   ReorderAnswer (DeviationKind::kReorderedAnswer, 7c): the first two labels of every answer swapped.
//   ShortenAnswer (DeviationKind::kShortAnswer): every answer one label (32 bytes) short.
//   MislabelRoundIndex (DeviationKind::kWrongRoundIndex): round r answered as round r+1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "adversary/cheats/cheat.h"

namespace wipeproof::adversary {

class ReplayAnswer final : public Cheat {
 public:
  const proto::Bytes* ReplayedAnswer(uint32_t round) override;
  void OnRoundDone(const Challenge& asked, proto::RoundAnswer::Reader answer) override;
  void OnSessionEnd() override { previous_.reset(); }

 private:
  std::optional<proto::Bytes> previous_;  // the last answer sent, canonical
};

class AnswerOtherRoundIndices final : public Cheat {
 public:
  Interception OnChallenge(const Challenge& asked, std::vector<std::vector<uint64_t>>* answered) override;
  void OnRoundDone(const Challenge& asked, proto::RoundAnswer::Reader answer) override;
  void OnSessionEnd() override { previous_.clear(); }

 private:
  std::vector<std::vector<uint64_t>> previous_;  // the last round's indices asked, as Challenge::indices
};

class ReorderAnswer final : public Cheat {
 public:
  void OnAnswer(uint32_t round, proto::RoundAnswer::Builder answer) override;
};

class ShortenAnswer final : public Cheat {
 public:
  void OnAnswer(uint32_t round, proto::RoundAnswer::Builder answer) override;
};

class MislabelRoundIndex final : public Cheat {
 public:
  void OnAnswer(uint32_t round, proto::RoundAnswer::Builder answer) override;
};

}  // namespace wipeproof::adversary

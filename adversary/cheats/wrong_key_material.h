// Adversary 6: fills every device with labels of other key material than the order's, and answers
// them as if they were the session's.
//   WrongSeed (DeviationKind::kWrongSeed): the order's seed with one bit flipped.
//   WrongFormat (DeviationKind::kWrongFormat): the other label format (192 for c1, c1 for 192).
//   WrongChunkLabels (DeviationKind::kWrongChunkLabels): chunks of m / 2 labels (at least 1).
#pragma once

#include "adversary/cheats/cheat.h"

namespace wipeproof::adversary {

class WrongSeed final : public Cheat {
 public:
  void ChooseKeyMaterial(RegionSpec* filled) override;
};

class WrongFormat final : public Cheat {
 public:
  void ChooseKeyMaterial(RegionSpec* filled) override;
};

class WrongChunkLabels final : public Cheat {
 public:
  void ChooseKeyMaterial(RegionSpec* filled) override;
};

}  // namespace wipeproof::adversary

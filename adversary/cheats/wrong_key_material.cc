#include "adversary/cheats/wrong_key_material.h"

#include <algorithm>

namespace wipeproof::adversary {

void WrongSeed::ChooseKeyMaterial(RegionSpec* filled) { filled->seed[0] ^= 1; }

void WrongFormat::ChooseKeyMaterial(RegionSpec* filled) {
  filled->format = filled->format == LabelFormat::kC1 ? LabelFormat::k192 : LabelFormat::kC1;
}

void WrongChunkLabels::ChooseKeyMaterial(RegionSpec* filled) {
  filled->chunk_labels = std::max<uint32_t>(1, filled->chunk_labels / 2);
}

}  // namespace wipeproof::adversary

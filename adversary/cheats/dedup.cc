#include "adversary/cheats/dedup.h"

#include <algorithm>
#include <cstring>

#include "adversary/cheats/chunk_drops.h"
#include "proto/label_wire.h"

namespace wipeproof::adversary {

using proto::kLabelBytes;

void Dedup::OnFilled() {
  HeldLabels& held = *tools_.held;
  if (held.devices.size() < 2) return;
  const uint64_t n = std::min(held.devices[1].chunks.size(), held.devices[0].chunks.size());
  const uint64_t count = deviation_.dedup_chunks == 0 ? n : deviation_.dedup_chunks;
  for (uint64_t c : PickChunks(held.devices[1], count, Placement::kContiguous, tools_.rng)) {
    if (c < n) DropChunk(&held, 1, c, ChunkState::kDeduped);
  }
}

bool Dedup::AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) {
  const HeldLabels& held = *tools_.held;
  const uint64_t offset = g - held.devices[d].first;
  if (held.devices[d].chunks[offset / held.m] != ChunkState::kDeduped) return false;
  std::memcpy(out, held.devices[0].labels.data() + offset * kLabelBytes, kLabelBytes);
  return true;
}

}  // namespace wipeproof::adversary

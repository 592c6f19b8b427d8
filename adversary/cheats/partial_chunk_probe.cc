#include "adversary/cheats/partial_chunk_probe.h"

#include "adversary/cheats/chunk_drops.h"

namespace wipeproof::adversary {

void PartialChunkProbe::OnFilled() {
  HeldLabels& held = *tools_.held;
  for (size_t d = 0; d < held.devices.size(); ++d) {
    const HeldDevice& dev = held.devices[d];
    if (dev.count % held.m != 0) DropChunk(&held, d, dev.chunks.size() - 1, ChunkState::kHidden);
  }
}

}  // namespace wipeproof::adversary

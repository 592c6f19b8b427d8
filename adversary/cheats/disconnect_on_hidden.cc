#include "adversary/cheats/disconnect_on_hidden.h"

#include "adversary/cheats/chunk_drops.h"

namespace wipeproof::adversary {

void DisconnectOnHidden::OnFilled() {
  DropRandomChunks(tools_.held, deviation_.hidden_fraction, ChunkState::kHidden, tools_.rng);
}

Interception DisconnectOnHidden::OnChallenge(const Challenge& asked, std::vector<std::vector<uint64_t>>* /*answered*/) {
  const HeldLabels& held = *tools_.held;
  for (size_t i = 0; i < asked.indices.size(); ++i) {
    const HeldDevice& dev = held.devices[asked.device(i)];
    for (uint64_t g : asked.indices[i]) {
      if (dev.chunks[(g - dev.first) / held.m] != ChunkState::kHidden) continue;
      ++tools_.log->hidden_chunks_challenged;
      deviation_.disconnect();  // rather than answer a label it does not hold
      return kj::Promise<void>(kj::NEVER_DONE);
    }
  }
  return std::nullopt;
}

}  // namespace wipeproof::adversary

#include "adversary/cheats/early_fill_report.h"

#include <cstring>

#include "adversary/cheats/chunk_drops.h"
#include "proto/label_wire.h"

namespace wipeproof::adversary {

using proto::kLabelBytes;

void EarlyFillReport::OnFilled() {
  DropRandomChunks(tools_.held, deviation_.hidden_fraction, ChunkState::kPending, tools_.rng);
  written_at_us_ = tools_.clock->MonotonicUs() + deviation_.advance_us;
}

bool EarlyFillReport::AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) {
  const HeldDevice& dev = tools_.held->devices[d];
  const uint64_t offset = g - dev.first;
  if (dev.chunks[offset / tools_.held->m] != ChunkState::kPending) return false;
  // Reported filled, but written only later: what is there before then is nothing.
  if (tools_.clock->MonotonicUs() >= written_at_us_) {
    std::memcpy(out, dev.labels.data() + offset * kLabelBytes, kLabelBytes);
  } else {
    ++tools_.log->hidden_chunks_challenged;
    std::memset(out, 0, kLabelBytes);
  }
  return true;
}

}  // namespace wipeproof::adversary

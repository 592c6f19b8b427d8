#include "adversary/cheats/borrower.h"

#include <algorithm>

#include "adversary/cheats/chunk_drops.h"
#include "kernels/region_labeler.h"

namespace wipeproof::adversary {

Interception Borrower::OnRound(uint32_t /*round*/) {
  if (!dropped_.empty() && deviation_.borrow_us > 0 &&
      tools_.clock->MonotonicUs() - dropped_at_us_ >= deviation_.borrow_us) {
    Relabel();
  }
  return std::nullopt;
}

void Borrower::OnRoundDone(const Challenge& asked, proto::RoundAnswer::Reader /*answer*/) {
  if (!dropped_.empty() || !IsOccupancyRound(asked)) return;
  HeldLabels& held = *tools_.held;
  for (size_t d = 0; d < held.devices.size(); ++d) {
    HeldDevice& dev = held.devices[d];
    const auto count = static_cast<uint64_t>(deviation_.hidden_fraction * static_cast<double>(dev.chunks.size()) + 0.5);
    for (uint64_t c : PickChunks(dev, count, Placement::kRandom, tools_.rng)) {
      if (dev.chunks[c] != ChunkState::kStored) continue;
      DropChunk(&held, d, c, ChunkState::kHidden);
      dropped_.emplace_back(d, c);
    }
  }
  dropped_at_us_ = tools_.clock->MonotonicUs();
}

void Borrower::OnSessionEnd() {
  dropped_.clear();
  dropped_at_us_ = 0;
}

bool Borrower::IsOccupancyRound(const Challenge& asked) const {
  const HeldLabels& held = *tools_.held;
  if (asked.indices.size() != held.devices.size()) return false;
  for (size_t i = 0; i < asked.indices.size(); ++i) {
    const HeldDevice& dev = held.devices[asked.device(i)];
    if (dev.occupancy_labels == 0 || asked.indices[i].size() != dev.occupancy_labels) return false;
  }
  return true;
}

void Borrower::Relabel() {
  HeldLabels& held = *tools_.held;
  for (const auto& [d, c] : dropped_) {
    HeldDevice& dev = held.devices[d];
    RegionSpec chunk = held.Session();
    chunk.first = dev.first + c * held.m;
    chunk.count = std::min<uint64_t>(held.m, dev.first + dev.count - chunk.first);
    RegionLabelOptions options;
    options.threads = 1;
    if (LabelRegion(chunk, dev.labels.data() + (chunk.first - dev.first) * kLabelBytes, options).ok()) {
      dev.chunks[c] = ChunkState::kStored;
    }
  }
  dropped_.clear();
}

}  // namespace wipeproof::adversary

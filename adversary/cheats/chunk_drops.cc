#include "adversary/cheats/chunk_drops.h"

#include <algorithm>
#include <cstring>

namespace wipeproof::adversary {

void DropChunk(HeldLabels* held, size_t d, uint64_t c, ChunkState state) {
  HeldDevice& dev = held->devices[d];
  if (state != ChunkState::kPending) {
    const uint64_t begin = c * held->ChunkBytes();
    const uint64_t end = std::min<uint64_t>(begin + held->ChunkBytes(), dev.labels.size());
    std::memset(dev.labels.data() + begin, 0, end - begin);
  }
  dev.chunks[c] = state;
}

std::vector<uint64_t> PickChunks(const HeldDevice& dev, uint64_t count, Placement placement, std::mt19937_64* rng) {
  const uint64_t n = dev.chunks.size();
  count = std::min(count, n);
  std::vector<uint64_t> picked;
  if (placement == Placement::kContiguous) {
    const uint64_t start = std::uniform_int_distribution<uint64_t>(0, n - count)(*rng);
    for (uint64_t c = start; c < start + count; ++c) picked.push_back(c);
  } else {
    std::vector<uint64_t> all(n);
    for (uint64_t c = 0; c < n; ++c) all[c] = c;
    std::shuffle(all.begin(), all.end(), *rng);
    picked.assign(all.begin(), all.begin() + static_cast<ptrdiff_t>(count));
  }
  return picked;
}

void DropRandomChunks(HeldLabels* held, double fraction, ChunkState state, std::mt19937_64* rng) {
  for (size_t d = 0; d < held->devices.size(); ++d) {
    const uint64_t n = held->devices[d].chunks.size();
    const auto count = std::min<uint64_t>(n, static_cast<uint64_t>(fraction * n + 0.5));
    std::vector<uint64_t> all(n);
    for (uint64_t c = 0; c < n; ++c) all[c] = c;
    std::shuffle(all.begin(), all.end(), *rng);
    for (uint64_t i = 0; i < count; ++i) DropChunk(held, d, all[i], state);
  }
}

}  // namespace wipeproof::adversary

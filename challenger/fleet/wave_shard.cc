#include "challenger/fleet/wave_shard.h"

#include <cstdlib>

namespace wipeproof {

namespace {

bool ParseUint(const std::string& text, uint32_t* out) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  *out = static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
  return true;
}

}  // namespace

StatusOr<WaveShard> ParseWaveShard(const std::string& text) {
  if (text.empty()) return WaveShard{};
  const size_t slash = text.find('/');
  WaveShard shard;
  if (slash == std::string::npos || !ParseUint(text.substr(0, slash), &shard.index) ||
      !ParseUint(text.substr(slash + 1), &shard.count) || shard.count == 0 || shard.count > 1024 ||
      shard.index >= shard.count) {
    return InvalidArgumentError("shard '" + text + "': want I/N with 0 <= I < N <= 1024 (this challenger's index, " +
                                "the number of challengers)");
  }
  return shard;
}

std::vector<const Wave*> WavesOfShard(const Inventory& inventory, const WaveShard& shard) {
  std::vector<const Wave*> waves;
  for (size_t k = 0; k < inventory.waves.size(); ++k) {
    if (k % shard.count == shard.index) waves.push_back(&inventory.waves[k]);
  }
  return waves;
}

}  // namespace wipeproof

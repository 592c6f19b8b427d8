// Sharding the inventory's waves over several challengers (`serve --shard=I/N`; the Kubernetes
// StatefulSet passes each replica's ordinal as I): wave k of the inventory (in file order) belongs
// to shard k mod N, so every wave has exactly one challenger and each challenger its own ledger.
// Every challenger must be given the same inventory and the same N.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "challenger/fleet/inventory.h"
#include "common/status.h"

namespace wipeproof {

struct WaveShard {
  uint32_t index = 0;  // in [0, count)
  uint32_t count = 1;  // >= 1
};

// Parses "I/N" (0 <= I < N <= 1024); "" is the whole inventory (0/1).
// Errors: INVALID_ARGUMENT naming the text and the rule.
StatusOr<WaveShard> ParseWaveShard(const std::string& text);

// The waves of `inventory` that belong to `shard`, in inventory order.
std::vector<const Wave*> WavesOfShard(const Inventory& inventory, const WaveShard& shard);

}  // namespace wipeproof

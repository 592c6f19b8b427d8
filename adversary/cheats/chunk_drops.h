// How the storage cheats leave chunks out of what the agent holds (held_labels.h): which chunks
// they pick, and dropping one (its labels zeroed, its state set).
//
// Thread-safety: pure functions of their arguments (the generator is the caller's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "adversary/deviation.h"
#include "adversary/held_labels.h"

namespace wipeproof::adversary {

// Marks chunk `c` of device `d` as `state` and zeroes its labels (kPending keeps them: they are
// written later).
void DropChunk(HeldLabels* held, size_t d, uint64_t c, ChunkState state);

// `count` distinct chunks of `dev` (all of them when it has fewer): one contiguous run at a random
// start (Placement::kContiguous, like a checkpoint region), else chosen at random.
std::vector<uint64_t> PickChunks(const HeldDevice& dev, uint64_t count, Placement placement, std::mt19937_64* rng);

// Drops round(fraction * chunks) chunks of every device, chosen at random, as `state`.
void DropRandomChunks(HeldLabels* held, double fraction, ChunkState state, std::mt19937_64* rng);

}  // namespace wipeproof::adversary

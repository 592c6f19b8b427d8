// What the cheating agent (cheating_agent.h) holds during one session: the session's key material
// and, per planned device, the labels it stored and what became of each chunk of m labels. The
// honest agent stores every chunk; a cheat (cheats/cheat.h) rearranges this after the fill, and the
// agent answers a round from it (a chunk not kStored answers what its cheat says, else zeros).
//
// Thread-safety: on the agent's event-loop thread.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/label_spec.h"

namespace wipeproof::adversary {

// What a chunk of a device's range holds when the rounds run.
enum class ChunkState : uint8_t {
  kStored,       // its labels, where the order put them
  kHidden,       // nothing: never written, or dropped
  kRelocated,    // its labels, kept in other memory (cheats/relocation.h)
  kOverwritten,  // nothing: its memory went to another device's chunk (cheats/relocation.h)
  kDeduped,      // nothing of its own: device 0's copy at the same offset answers (cheats/dedup.h)
  kPending,      // its labels, but written only some time after the report (cheats/early_fill_report.h)
};

// One planned device, as the order describes it and the agent filled it.
struct HeldDevice {
  std::string selector;
  uint64_t first = 0;  // first global label index of its range
  uint64_t count = 0;  // labels in its range
  uint64_t capacity_bytes = 0;
  uint64_t allowed_reserve_bytes = 0;
  uint32_t labels_per_round = 0;     // q_d of the order
  uint32_t occupancy_labels = 0;     // o_d of the order (0: no occupancy window)
  std::vector<uint8_t> labels;       // count * 32 bytes; the labels of chunks not kStored are zero (or,
                                     // kPending, not yet readable)
  std::vector<ChunkState> chunks;    // per chunk of m, the last one partial when count is not whole chunks
  uint64_t foreign_label_bytes = 0;  // bytes of other devices' labels kept in this device's memory
};

struct HeldLabels {
  std::array<uint8_t, kSeedBytes> seed{};  // the order's key material
  LabelFormat format = LabelFormat::kC1;
  uint32_t m = 0;                   // labels per chunk
  std::vector<HeldDevice> devices;  // in the order's device order

  uint64_t ChunkBytes() const { return uint64_t{m} * kLabelBytes; }
  // The session's labels as the order defines them (first and count unset).
  RegionSpec Session() const {
    RegionSpec s;
    s.format = format;
    std::memcpy(s.seed, seed.data(), kSeedBytes);
    s.chunk_labels = m;
    return s;
  }
};

}  // namespace wipeproof::adversary

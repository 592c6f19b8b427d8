#include "adversary/cheats/under_fill.h"

#include <algorithm>

#include "adversary/cheats/chunk_drops.h"
#include "proto/label_wire.h"

namespace wipeproof::adversary {

using proto::kLabelBytes;

void UnderFill::OnFilled() {
  HeldLabels& held = *tools_.held;
  const size_t last = held.devices.size() - 1;
  const uint64_t n = held.devices[last].chunks.size();
  for (uint64_t c = n - std::min(deviation_.short_chunks, n); c < n; ++c) {
    DropChunk(&held, last, c, ChunkState::kHidden);
  }
}

void UnderFill::OnReportFacts(std::vector<proto::DeviceFillFacts>* facts) {
  proto::DeviceFillFacts& f = facts->back();
  const uint64_t short_labels = std::min(f.label_count, deviation_.short_chunks * tools_.held->m);
  f.label_count -= short_labels;
  switch (excuse_) {
    case Excuse::kHeldByOthers:
      f.bytes_held_by_others = short_labels * kLabelBytes;
      f.note = deviation_.note.empty() ? "memory held by other processes when the fill started" : deviation_.note;
      break;
    case Excuse::kLargerReserve:
      f.reserve_bytes += short_labels * kLabelBytes;
      f.note = deviation_.note.empty() ? "the driver needs a larger reserve on this device" : deviation_.note;
      break;
  }
  f.bytes_held = f.label_count * kLabelBytes;
}

}  // namespace wipeproof::adversary

#include "adversary/cheats/relocation.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "adversary/cheats/chunk_drops.h"
#include "proto/label_wire.h"

namespace wipeproof::adversary {

using proto::kLabelBytes;

bool Relocation::AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) {
  const HeldLabels& held = *tools_.held;
  const uint64_t offset = g - held.devices[d].first;
  const uint64_t c = offset / held.m;
  if (held.devices[d].chunks[c] != ChunkState::kRelocated) return false;
  const std::vector<uint8_t>& chunk = moved_.at({d, c});
  std::memcpy(out, chunk.data() + (offset - c * held.m) * kLabelBytes, kLabelBytes);
  return true;
}

void Relocation::Move(size_t from, uint64_t c, size_t to) {
  HeldLabels& held = *tools_.held;
  const HeldDevice& src = held.devices[from];
  const uint64_t begin = c * held.ChunkBytes();
  const uint64_t end = std::min<uint64_t>(begin + held.ChunkBytes(), src.labels.size());
  moved_[{from, c}].assign(src.labels.begin() + static_cast<ptrdiff_t>(begin),
                           src.labels.begin() + static_cast<ptrdiff_t>(end));
  if (to < held.devices.size()) held.devices[to].foreign_label_bytes += end - begin;
  DropChunk(&held, from, c, ChunkState::kRelocated);
  ++tools_.log->relocated_chunks;
}

void RelocateToHost::OnFilled() {
  HeldLabels& held = *tools_.held;
  const uint64_t chunk_bytes = held.ChunkBytes();
  const size_t from = held.devices.size() - 1;
  size_t host = held.devices.size();
  for (size_t d = 0; d < held.devices.size(); ++d) {
    if (held.devices[d].selector == "host") host = d;
  }
  const bool host_planned = host < held.devices.size() && host != from;
  // Room for relocated chunks: host memory outside the plan (host_free_bytes: all of it when host is
  // not planned, what the physical memory leaves beside the host plan otherwise), then what the
  // planned host region leaves of the host's declared capacity (nothing, when the plan covers it).
  uint64_t outside_room = deviation_.host_free_bytes / chunk_bytes;
  uint64_t inside_room = 0;
  if (host_planned) {
    const HeldDevice& h = held.devices[host];
    const uint64_t host_held = h.count * kLabelBytes;
    inside_room = h.capacity_bytes > host_held ? (h.capacity_bytes - host_held) / chunk_bytes : 0;
  }
  const uint64_t n = held.devices[from].chunks.size();
  const uint64_t k = std::min(deviation_.relocate_chunks, n);
  uint64_t overwrite_next = host_planned ? held.devices[host].chunks.size() : 0;
  for (uint64_t c = n - k; c < n; ++c) {
    if (outside_room > 0) {
      --outside_room;
      Move(from, c, held.devices.size());  // outside every planned device
      continue;
    }
    if (inside_room > 0) {
      --inside_room;
    } else if (overwrite_next > 0) {
      // No room left: the chunk takes the place of one of the host's own labelled chunks.
      DropChunk(&held, host, --overwrite_next, ChunkState::kOverwritten);
      ++tools_.log->overwritten_chunks;
    } else {
      DropChunk(&held, from, c, ChunkState::kOverwritten);  // nowhere to go
      continue;
    }
    Move(from, c, host_planned ? host : held.devices.size());
  }
}

void RelocateToReserve::OnFilled() {
  HeldLabels& held = *tools_.held;
  if (held.devices.size() < 2) return;
  const HeldDevice& dst = held.devices[1];
  const uint64_t dst_held = dst.count * kLabelBytes;
  uint64_t room = dst.capacity_bytes > dst_held ? (dst.capacity_bytes - dst_held) / held.ChunkBytes() : 0;
  const HeldDevice& src = held.devices[0];
  const uint64_t n = src.chunks.size();
  for (uint64_t c : PickChunks(src, std::min(deviation_.relocate_chunks, n), Placement::kContiguous, tools_.rng)) {
    if (room == 0) break;
    --room;
    Move(0, c, 1);
  }
}

}  // namespace wipeproof::adversary

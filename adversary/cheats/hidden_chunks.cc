#include "adversary/cheats/hidden_chunks.h"

#include <sodium.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "adversary/cheats/chunk_drops.h"
#include "kernels/region_labeler.h"
#include "proto/label_wire.h"

namespace wipeproof::adversary {

namespace {

using proto::kLabelBytes;

// Label `g` of a device's range [first, first + count) recomputed from its whole chunk (a region of
// one label would be a partial chunk, which in 192 is another graph).
Status ChunkLabel(const RegionSpec& session, uint64_t first, uint64_t count, uint64_t g, uint8_t* out) {
  const uint64_t m = session.chunk_labels;
  const uint64_t chunk_first = first + (g - first) / m * m;
  const uint64_t chunk_count = std::min<uint64_t>(m, first + count - chunk_first);
  std::vector<uint8_t> chunk(chunk_count * kLabelBytes);
  RegionSpec region = session;
  region.first = chunk_first;
  region.count = chunk_count;
  RegionLabelOptions options;
  options.threads = 1;
  WP_RETURN_IF_ERROR(LabelRegion(region, chunk.data(), options));
  std::memcpy(out, chunk.data() + (g - chunk_first) * kLabelBytes, kLabelBytes);
  return Status::Ok();
}

}  // namespace

void HideChunks::OnFilled() {
  HeldLabels& held = *tools_.held;
  for (size_t d = 0; d < held.devices.size(); ++d) {
    const HeldDevice& dev = held.devices[d];
    if (deviation_.placement == Placement::kStrided) {
      const uint64_t stride = std::max<uint64_t>(1, deviation_.stride);
      for (uint64_t c = 0; c < dev.count / held.m; c += stride) DropChunk(&held, d, c, ChunkState::kHidden);
      continue;
    }
    const auto hidden = static_cast<uint64_t>(deviation_.hidden_fraction * dev.chunks.size() + 0.5);
    for (uint64_t c : PickChunks(dev, hidden, deviation_.placement, tools_.rng)) {
      DropChunk(&held, d, c, ChunkState::kHidden);
    }
  }
}

bool HideChunks::AnswerUnstoredLabel(size_t d, uint64_t g, uint8_t* out) {
  const HeldLabels& held = *tools_.held;
  const HeldDevice& dev = held.devices[d];
  const uint64_t c = (g - dev.first) / held.m;
  if (dev.chunks[c] != ChunkState::kHidden) return false;
  ++tools_.log->hidden_chunks_challenged;
  switch (deviation_.hidden_answer) {
    case HiddenAnswer::kRecompute:
      // Correct labels, recomputed for real; the time is charged per round (OnAnswer).
      recomputed_.insert({d, c});
      (void)ChunkLabel(held.Session(), dev.first, dev.count, g, out);
      return true;
    case HiddenAnswer::kEarlierSession:
      if (tools_.memory->earlier_seed) {
        RegionSpec earlier = held.Session();
        std::memcpy(earlier.seed, tools_.memory->earlier_seed->data(), kSeedBytes);
        (void)ChunkLabel(earlier, dev.first, dev.count, g, out);
        return true;
      }
      break;  // no earlier session: as good as random
    case HiddenAnswer::kRandomBytes:
      break;
    case HiddenAnswer::kZeros:
      std::memset(out, 0, kLabelBytes);
      return true;
  }
  randombytes_buf(out, kLabelBytes);
  return true;
}

void HideChunks::OnAnswer(uint32_t /*round*/, proto::RoundAnswer::Builder /*answer*/) {
  if (recomputed_.empty()) return;
  // ceil(k / cores) batches of depth(m) * c_node * t_min each, rounded up to whole microseconds.
  const SimTiming& t = *tools_.timing;
  const uint64_t batches = (recomputed_.size() + t.recompute_cores - 1) / t.recompute_cores;
  const uint64_t charge_us = (batches * t.recompute_chunk_ps + 999'999) / 1'000'000;
  tools_.clock->Charge(static_cast<int64_t>(charge_us));
  tools_.log->recompute_charged_us += static_cast<int64_t>(charge_us);
  tools_.log->max_round_recompute_us = std::max(tools_.log->max_round_recompute_us, charge_us);
  recomputed_.clear();
}

}  // namespace wipeproof::adversary

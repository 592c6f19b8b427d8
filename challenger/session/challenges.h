// Challenge indices (design-brief.md "Protocol v1", step 3): for every round and every device, q_d
// global label indices uniform over the device's range, each in a distinct chunk within the round,
// from libsodium's CSPRNG. All rounds are drawn up front so the expected labels can be computed
// during the fill, but they are secret until sent: nothing here logs or prints them, and the
// session runner reads round r's indices only when it sends round r.
//
// Drawing: per round and device, a uniformly random set of q_d distinct chunks of the range
// (Floyd's algorithm, q_d draws), in random order (Fisher-Yates), then a uniform label inside each
// chunk's part of the range. Plans cover whole chunks (challenger/fleet/plan_builder.h), so each index is then uniform over
// the range, conditioned only on the chunks of one round being distinct.
//
// Thread-safety: a ChallengeSet is immutable after GenerateChallenges; share it freely read-only.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace wipeproof {

// A uniform integer in [0, bound) from libsodium's CSPRNG, without modulo bias:
// randombytes_uniform for bounds below 2^32, rejection sampling on 64-bit draws above.
// REQUIRES: bound >= 1.
uint64_t UniformBelow(uint64_t bound);

struct ChallengeRange {
  uint64_t first_label = 0;       // global index of the device's first label
  uint64_t label_count = 0;       // labels in the range
  uint32_t labels_per_round = 0;  // q_d; <= chunks the range touches
};

class ChallengeSet {
 public:
  uint32_t rounds() const { return static_cast<uint32_t>(indices_.size()); }
  size_t devices() const { return indices_.empty() ? 0 : indices_[0].size(); }
  // Round `round`'s indices for device `device`, in send order.
  const std::vector<uint64_t>& Indices(uint32_t round, size_t device) const { return indices_[round][device]; }
  // Labels asked in one round, all devices (the answer carries 32 bytes per label).
  size_t LabelsPerRound() const { return labels_per_round_; }
  // Distinct chunks of device `device` challenged in rounds [0, rounds_run): N_d of the bound.
  uint64_t DistinctChunks(size_t device, uint32_t rounds_run, uint32_t chunk_labels) const;

 private:
  friend StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t rounds,
                                                   uint32_t chunk_labels);
  std::vector<std::vector<std::vector<uint64_t>>> indices_;  // [round][device][k]
  size_t labels_per_round_ = 0;
};

// Draws `rounds` rounds for `ranges` (one per device, in plan order).
// Errors: INVALID_ARGUMENT for m == 0, an empty range, q_d == 0 or q_d above the range's chunks.
StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t rounds,
                                          uint32_t chunk_labels);

}  // namespace wipeproof

// Challenge indices (protocol v2): for every device, a sequence of batches, each of q global label
// indices uniform over the device's range, each in a distinct chunk within the batch, from
// libsodium's CSPRNG. A device's first `proof` batches have q_d labels (labels_per_round): they are
// the session's proof rounds, sent once every device and every member of the wave is filled. The
// rest ("holding" batches) have hold_labels each, fewer than q_d (0: none for that device), so a
// round's shape says its kind: they probe the device from its fill notice until the proof rounds,
// and after them until every member of its wave has passed, so a device can never tell that it
// will not be asked again (session_runner.h step 4). All batches are drawn before the
// order is sent, so the expected labels are ready when the first device reports filled; they are
// secret until sent: nothing here logs or prints them, and the session runner reads a batch only
// when it sends it.
//
// Drawing: per batch, a uniformly random set of q distinct chunks of the range (Floyd's algorithm,
// q draws), in random order (Fisher-Yates), then a uniform label inside each chunk's part of the
// range. Plans cover whole chunks (challenger/fleet/plan_builder.h), so each index is then uniform
// over the range, conditioned only on the chunks of one batch being distinct.
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
  uint32_t labels_per_round = 0;  // q_d of a proof batch; <= chunks the range touches
  uint32_t hold_labels = 0;       // q of a holding batch; < labels_per_round (0 when there are none)
};

class ChallengeSet {
 public:
  size_t devices() const { return batches_.size(); }
  // Proof batches per device (R) and all batches per device (R + holding).
  uint32_t proof_batches() const { return proof_batches_; }
  uint32_t batches() const { return batches_.empty() ? 0 : static_cast<uint32_t>(batches_[0].size()); }
  // Batch `batch` of device `device`, in send order.
  const std::vector<uint64_t>& Indices(size_t device, uint32_t batch) const { return batches_[device][batch]; }

 private:
  friend StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                                   uint32_t holding_batches, uint32_t chunk_labels);
  std::vector<std::vector<std::vector<uint64_t>>> batches_;  // [device][batch][k]
  uint32_t proof_batches_ = 0;
};

// Draws `proof_batches` batches of labels_per_round and `holding_batches` of hold_labels for every
// range (one per device, in plan order).
// Errors: INVALID_ARGUMENT for m == 0, no ranges, an empty range, q_d == 0 or q_d above the range's
// chunks, hold_labels above q_d, or holding batches with hold_labels == 0.
StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                          uint32_t holding_batches, uint32_t chunk_labels);

}  // namespace wipeproof

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
// when it sends it. Whoever reads them could keep just those labels, so they live, with the
// scratch of their drawing, in a SecretBuffer (secret_buffer.h: locked, never in a core dump,
// zeroed when the set goes).
//
// Drawing: per batch, a uniformly random set of q distinct chunks of the range (Floyd's algorithm,
// q draws), in random order (Fisher-Yates), then a uniform label inside each chunk's part of the
// range. Plans cover whole chunks (challenger/fleet/plan_builder.h), so each index is then uniform
// over the range, conditioned only on the chunks of one batch being distinct.
//
// Thread-safety: a ChallengeSet is immutable after GenerateChallenges; share it freely read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "challenger/session/secret_buffer.h"
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
  // One batch's label indices, a view into the set's SecretBuffer (valid while the set lives).
  class Batch {
   public:
    Batch(const uint64_t* data, size_t size) : data_(data), size_(size) {}
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    uint64_t operator[](size_t k) const { return data_[k]; }
    const uint64_t* begin() const { return data_; }
    const uint64_t* end() const { return data_ + size_; }

   private:
    const uint64_t* data_;
    size_t size_;
  };

  size_t devices() const { return starts_.size(); }
  // Proof batches per device (R) and all batches per device (R + holding).
  uint32_t proof_batches() const { return proof_batches_; }
  uint32_t batches() const { return starts_.empty() ? 0 : static_cast<uint32_t>(starts_[0].size() - 1); }
  // Batch `batch` of device `device`, in send order.
  Batch Indices(size_t device, uint32_t batch) const {
    const std::vector<size_t>& at = starts_[device];
    return Batch(reinterpret_cast<const uint64_t*>(indices_.data()) + at[batch], at[batch + 1] - at[batch]);
  }

 private:
  friend StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                                   uint32_t holding_batches, uint32_t chunk_labels);
  SecretBuffer indices_;                     // every index: device by device, batch by batch
  std::vector<std::vector<size_t>> starts_;  // [device][batch]: first index of the batch; one past the last at the end
  uint32_t proof_batches_ = 0;
};

// Draws `proof_batches` batches of labels_per_round and `holding_batches` of hold_labels for every
// range (one per device, in plan order).
// Errors: INVALID_ARGUMENT for m == 0, no ranges, an empty range, q_d == 0 or q_d above the range's
// chunks, hold_labels above q_d, or holding batches with hold_labels == 0.
StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                          uint32_t holding_batches, uint32_t chunk_labels);

}  // namespace wipeproof

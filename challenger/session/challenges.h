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

// A gap with the exponential distribution of mean `mean_us` microseconds, from libsodium's CSPRNG:
// -mean * ln(U) for U uniform on (0, 1) at 2^-53 resolution (so at most ~37 means), rounded to the
// nearest microsecond. The occupancy rounds' gaps (occupancy_bound.h).
uint64_t ExponentialGapUs(uint64_t mean_us);

struct ChallengeRange {
  uint64_t first_label = 0;       // global index of the device's first label
  uint64_t label_count = 0;       // labels in the range
  uint32_t labels_per_round = 0;  // q_d of a proof batch; <= chunks the range touches
  uint32_t hold_labels = 0;       // q of a holding batch; < labels_per_round (0 when there are none)
  uint32_t occupancy_labels = 0;  // o_d of an occupancy batch; != labels_per_round (0: no window)
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
  // Proof batches per device (R), holding and occupancy batches per device, and all of them.
  uint32_t proof_batches() const { return proof_batches_; }
  uint32_t holding_batches() const { return batches() - proof_batches_ - occupancy_batches_; }
  uint32_t occupancy_batches() const { return occupancy_batches_; }
  // Index of the first occupancy batch.
  uint32_t first_occupancy_batch() const { return batches() - occupancy_batches_; }
  uint32_t batches() const { return starts_.empty() ? 0 : static_cast<uint32_t>(starts_[0].size() - 1); }
  // Batch `batch` of device `device`, in send order.
  Batch Indices(size_t device, uint32_t batch) const {
    const std::vector<size_t>& at = starts_[device];
    return Batch(reinterpret_cast<const uint64_t*>(indices_.data()) + at[batch], at[batch + 1] - at[batch]);
  }

 private:
  friend StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                                   uint32_t holding_batches, uint32_t chunk_labels,
                                                   uint32_t occupancy_batches);
  SecretBuffer indices_;                     // every index: device by device, batch by batch
  std::vector<std::vector<size_t>> starts_;  // [device][batch]: first index of the batch; one past the last at the end
  uint32_t proof_batches_ = 0;
  uint32_t occupancy_batches_ = 0;
};

// Draws `proof_batches` batches of labels_per_round, `holding_batches` of hold_labels and
// `occupancy_batches` of occupancy_labels for every range (one per device, in plan order), in that
// order. Occupancy batches are drawn like the others, each afresh: a chunk asked in one may be asked
// again in a later one, as uniform draws over the window require (occupancy_bound.h).
// Errors: INVALID_ARGUMENT for m == 0, no ranges, an empty range, q_d == 0 or q_d above the range's
// chunks, hold_labels above q_d, occupancy_labels 0, equal to q_d or above the chunks with
// occupancy batches.
StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                          uint32_t holding_batches, uint32_t chunk_labels,
                                          uint32_t occupancy_batches = 0);

}  // namespace wipeproof

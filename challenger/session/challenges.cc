#include "challenger/session/challenges.h"

#include <sodium.h>

#include <algorithm>
#include <cmath>

#include "proto/crypto.h"

namespace wipeproof {

uint64_t UniformBelow(uint64_t bound) {
  if (bound <= UINT32_MAX) return randombytes_uniform(static_cast<uint32_t>(bound));
  // Accept draws below the largest multiple of `bound` that fits in 2^64: no modulo bias.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % bound);
  for (;;) {
    uint64_t x;
    proto::RandomBytes(reinterpret_cast<uint8_t*>(&x), sizeof(x));
    if (x < limit) return x % bound;
  }
}

uint64_t ExponentialGapUs(uint64_t mean_us) {
  const double u = (static_cast<double>(UniformBelow(uint64_t{1} << 53)) + 0.5) * 0x1.0p-53;
  const double gap = -static_cast<double>(mean_us) * std::log(u);
  return gap >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(std::llround(gap));
}

StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                          uint32_t holding_batches, uint32_t chunk_labels,
                                          uint32_t occupancy_batches) {
  if (chunk_labels == 0) return InvalidArgumentError("chunk_labels must be >= 1");
  if (ranges.empty()) return InvalidArgumentError("no devices to challenge");
  if (proto::InitSodium().ok() == false) return InternalError("libsodium failed to initialise");
  const uint64_t m = chunk_labels;
  for (size_t d = 0; d < ranges.size(); ++d) {
    const ChallengeRange& r = ranges[d];
    if (r.label_count == 0 || r.first_label > UINT64_MAX - r.label_count) {
      return InvalidArgumentError("device " + std::to_string(d) + ": empty or overflowing range");
    }
    const uint64_t chunks = (r.first_label + r.label_count - 1) / m - r.first_label / m + 1;
    if (r.labels_per_round == 0 || r.labels_per_round > chunks) {
      return InvalidArgumentError("device " + std::to_string(d) + ": labels_per_round " +
                                  std::to_string(r.labels_per_round) + " not in [1, " + std::to_string(chunks) +
                                  "] (chunks of its range)");
    }
    // Smaller than a proof batch, so a round's shape says which kind it is (an auditor counts only
    // proof rounds); 0: the device has no holding rounds.
    if (r.hold_labels != 0 && r.hold_labels >= r.labels_per_round) {
      return InvalidArgumentError("device " + std::to_string(d) + ": hold_labels " + std::to_string(r.hold_labels) +
                                  " not in [0, labels_per_round " + std::to_string(r.labels_per_round) + ")");
    }
    // Another shape than a proof batch's, for the same reason.
    if (occupancy_batches != 0 &&
        (r.occupancy_labels == 0 || r.occupancy_labels > chunks || r.occupancy_labels == r.labels_per_round)) {
      return InvalidArgumentError("device " + std::to_string(d) + ": occupancy_labels " +
                                  std::to_string(r.occupancy_labels) + " not in [1, " + std::to_string(chunks) +
                                  "] or equal to labels_per_round");
    }
  }
  ChallengeSet set;
  set.proof_batches_ = proof_batches;
  set.occupancy_batches_ = occupancy_batches;
  const uint32_t total = proof_batches + holding_batches + occupancy_batches;
  size_t count = 0, largest = 1;
  set.starts_.assign(ranges.size(), std::vector<size_t>(size_t{total} + 1));
  for (size_t d = 0; d < ranges.size(); ++d) {
    for (uint32_t batch = 0; batch < total; ++batch) {
      const uint32_t q = batch < proof_batches                     ? ranges[d].labels_per_round
                         : batch < proof_batches + holding_batches ? ranges[d].hold_labels
                                                                   : ranges[d].occupancy_labels;
      set.starts_[d][batch] = count;
      count += q;
      largest = std::max<size_t>(largest, q);
    }
    set.starts_[d][total] = count;
  }
  WP_ASSIGN_OR_RETURN(set.indices_, SecretBuffer::Allocate(count * sizeof(uint64_t)));
  // The chunks picked so far in a batch (Floyd's set): an open-addressing table of chunk + 1 (0 =
  // empty), at most half full, secret like the indices.
  size_t slots = 1;
  while (slots < 2 * largest) slots *= 2;
  WP_ASSIGN_OR_RETURN(SecretBuffer table_memory, SecretBuffer::Allocate(slots * sizeof(uint64_t)));
  uint64_t* const table = reinterpret_cast<uint64_t*>(table_memory.data());
  auto insert = [&](uint64_t chunk) {  // true when `chunk` was not in the table yet
    for (size_t at = (chunk * 0x9E3779B97F4A7C15ULL) & (slots - 1);; at = (at + 1) & (slots - 1)) {
      if (table[at] == chunk + 1) return false;
      if (table[at] == 0) {
        table[at] = chunk + 1;
        return true;
      }
    }
  };
  uint64_t* const all = reinterpret_cast<uint64_t*>(set.indices_.data());
  for (size_t d = 0; d < ranges.size(); ++d) {
    const ChallengeRange& r = ranges[d];
    const uint64_t first_chunk = r.first_label / m;
    const uint64_t end = r.first_label + r.label_count;
    const uint64_t chunks = (end - 1) / m - first_chunk + 1;
    for (uint32_t batch = 0; batch < total; ++batch) {
      uint64_t* const out = all + set.starts_[d][batch];
      const uint64_t q = set.starts_[d][batch + 1] - set.starts_[d][batch];
      std::fill(table, table + slots, 0);
      // Floyd: a uniform q-subset of [0, chunks) in q draws.
      size_t k = 0;
      for (uint64_t j = chunks - q; j < chunks; ++j) {
        const uint64_t t = UniformBelow(j + 1);
        out[k++] = insert(t) ? t : (insert(j), j);
      }
      // Fisher-Yates: a uniform order, so position says nothing about the value.
      for (size_t i = q; i > 1; --i) std::swap(out[i - 1], out[UniformBelow(i)]);
      for (size_t i = 0; i < q; ++i) {  // each chunk to a uniform label inside its part of the range
        const uint64_t c = out[i];
        const uint64_t lo = std::max(r.first_label, (first_chunk + c) * m);
        const uint64_t hi = std::min(end, (first_chunk + c + 1) * m);
        out[i] = lo + UniformBelow(hi - lo);
      }
    }
  }
  return set;
}

}  // namespace wipeproof

#include "challenger/session/challenges.h"

#include <sodium.h>

#include <algorithm>
#include <unordered_set>

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

StatusOr<ChallengeSet> GenerateChallenges(const std::vector<ChallengeRange>& ranges, uint32_t proof_batches,
                                          uint32_t holding_batches, uint32_t chunk_labels) {
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
  }
  ChallengeSet set;
  set.proof_batches_ = proof_batches;
  const uint32_t total = proof_batches + holding_batches;
  set.batches_.assign(ranges.size(), std::vector<std::vector<uint64_t>>(total));
  for (size_t d = 0; d < ranges.size(); ++d) {
    const ChallengeRange& r = ranges[d];
    const uint64_t first_chunk = r.first_label / m;
    const uint64_t end = r.first_label + r.label_count;
    const uint64_t chunks = (end - 1) / m - first_chunk + 1;
    for (uint32_t batch = 0; batch < total; ++batch) {
      const uint32_t q = batch < proof_batches ? r.labels_per_round : r.hold_labels;
      // Floyd: a uniform q-subset of [0, chunks) in q draws.
      std::unordered_set<uint64_t> picked;
      std::vector<uint64_t> order;
      order.reserve(q);
      for (uint64_t j = chunks - q; j < chunks; ++j) {
        const uint64_t t = UniformBelow(j + 1);
        const uint64_t c = picked.insert(t).second ? t : (picked.insert(j), j);
        order.push_back(c);
      }
      // Fisher-Yates: a uniform order, so position says nothing about the value.
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[UniformBelow(i)]);
      std::vector<uint64_t>& out = set.batches_[d][batch];
      out.reserve(q);
      for (uint64_t c : order) {
        const uint64_t lo = std::max(r.first_label, (first_chunk + c) * m);
        const uint64_t hi = std::min(end, (first_chunk + c + 1) * m);
        out.push_back(lo + UniformBelow(hi - lo));
      }
    }
  }
  return set;
}

}  // namespace wipeproof

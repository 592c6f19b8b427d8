#include "challenger/session/expected_labels.h"

#include <kj/common.h>
#include <sodium.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "kernels/chunk_verifier.h"
#include "kernels/region_labeler.h"

namespace wipeproof {

namespace {

constexpr size_t kLabel = 32;
constexpr size_t kChunksPerThreadPerBatch = 32;

}  // namespace

std::unique_ptr<ExpectedLabels> ExpectedLabels::Start(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges) {
  std::unique_ptr<ExpectedLabels> e(new ExpectedLabels(spec, challenges));
  e->worker_ = std::thread([p = e.get()] { p->Work(); });
  return e;
}

ExpectedLabels::ExpectedLabels(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges)
    : spec_(spec), challenges_(challenges) {
  size_t bytes = 0;
  offsets_.resize(challenges.devices());
  for (size_t d = 0; d < challenges.devices(); ++d) {
    for (uint32_t b = 0; b < challenges.batches(); ++b) {
      offsets_[d].push_back(bytes);
      bytes += challenges.Indices(d, b).size() * kLabel;
    }
  }
  auto labels = SecretBuffer::Allocate(bytes);
  if (labels.ok()) {
    labels_ = std::move(labels).value();
  } else {
    status_ = labels.status();  // Work() reports it
  }
}

ExpectedLabels::~ExpectedLabels() {
  cancel_.store(true);
  if (worker_.joinable()) worker_.join();
}

Status ExpectedLabels::Wait() {
  if (worker_.joinable()) worker_.join();
  return status_;
}

void ExpectedLabels::Work() {
  if (spec_.test_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(spec_.test_delay_us));
  if (status_.ok()) status_ = Compute();
  done_.store(true, std::memory_order_release);
}

Status ExpectedLabels::Compute() {
  const uint64_t m = spec_.session.chunk_labels;
  const int threads = spec_.threads > 0 ? spec_.threads : std::max(1u, std::thread::hardware_concurrency());
  const size_t unit_chunks = kChunksPerThreadPerBatch * static_cast<size_t>(threads);
  uint64_t total = 0, done = 0;
  for (size_t d = 0; d < spec_.devices.size(); ++d) {
    for (uint32_t b = 0; b < challenges_.batches(); ++b) total += challenges_.Indices(d, b).size();
  }
  for (size_t d = 0; d < spec_.devices.size(); ++d) {
    RegionSpec region = spec_.session;
    region.first = spec_.devices[d].first_label;
    region.count = spec_.devices[d].label_count;
    // (index, batch, position) for every batch of the device, sorted so work units end at chunk
    // edges (a chunk asked in several batches is computed once when it falls in one unit).
    struct Want {
      uint64_t index;
      uint32_t batch;
      uint32_t slot;
    };
    std::vector<Want> wants;
    size_t device_labels = 0;
    for (uint32_t b = 0; b < challenges_.batches(); ++b) device_labels += challenges_.Indices(d, b).size();
    wants.reserve(device_labels);  // no reallocation leaves a copy of an index behind
    for (uint32_t b = 0; b < challenges_.batches(); ++b) {
      const ChallengeSet::Batch idx = challenges_.Indices(d, b);
      for (size_t k = 0; k < idx.size(); ++k) wants.push_back({idx[k], b, static_cast<uint32_t>(k)});
    }
    std::sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) { return a.index < b.index; });
    std::vector<uint64_t> unit;
    unit.reserve(wants.size());  // no reallocation leaves a copy behind
    // The indices copied here are as secret as the set's: zeroed however this returns.
    KJ_DEFER({
      sodium_memzero(wants.data(), wants.size() * sizeof(Want));
      sodium_memzero(unit.data(), unit.capacity() * sizeof(uint64_t));
    });
    SecretBuffer out;  // the unit's labels in sorted order; grows (the old one zeroed) when a unit needs more
    for (size_t i = 0; i < wants.size();) {
      if (cancel_.load()) return FailedPreconditionError("cancelled");
      size_t j = i, chunks = 0;
      uint64_t last_chunk = UINT64_MAX;
      while (j < wants.size()) {
        const uint64_t c = wants[j].index / m;
        if (c != last_chunk) {
          if (chunks == unit_chunks) break;
          ++chunks;
          last_chunk = c;
        }
        ++j;
      }
      unit.resize(j - i);
      for (size_t k = i; k < j; ++k) unit[k - i] = wants[k].index;
      if (out.size() < unit.size() * kLabel) {
        WP_ASSIGN_OR_RETURN(out, SecretBuffer::Allocate(std::max(unit.size() * kLabel, 2 * out.size())));
      }
      WP_RETURN_IF_ERROR(RecomputeLabels(region, unit.data(), unit.size(), out.data(), threads)
                             .WithContext("expected labels of device " + std::to_string(d)));
      for (size_t k = i; k < j; ++k) {
        std::memcpy(labels_.data() + offsets_[d][wants[k].batch] + size_t{wants[k].slot} * kLabel,
                    out.data() + (k - i) * kLabel, kLabel);
      }
      done += j - i;
      if (spec_.progress) spec_.progress(done, total);
      i = j;
    }
  }
  return Status::Ok();
}

}  // namespace wipeproof

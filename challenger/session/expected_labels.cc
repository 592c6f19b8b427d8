#include "challenger/session/expected_labels.h"

#include <chrono>

#include <algorithm>
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
  rounds_.assign(challenges.rounds(), std::vector<uint8_t>(challenges.LabelsPerRound() * kLabel));
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
  status_ = Compute();
  done_.store(true, std::memory_order_release);
}

Status ExpectedLabels::Compute() {
  const uint64_t m = spec_.session.chunk_labels;
  const int threads = spec_.threads > 0 ? spec_.threads : std::max(1u, std::thread::hardware_concurrency());
  const size_t batch_chunks = kChunksPerThreadPerBatch * static_cast<size_t>(threads);
  size_t device_offset = 0;  // labels before this device within a round
  for (size_t d = 0; d < spec_.devices.size(); ++d) {
    RegionSpec region = spec_.session;
    region.first = spec_.devices[d].first_label;
    region.count = spec_.devices[d].label_count;
    // (index, destination offset in labels) for every round, sorted so batches end at chunk edges.
    struct Want {
      uint64_t index;
      uint32_t round;
      uint32_t slot;
    };
    std::vector<Want> wants;
    for (uint32_t r = 0; r < challenges_.rounds(); ++r) {
      const std::vector<uint64_t>& idx = challenges_.Indices(r, d);
      for (size_t k = 0; k < idx.size(); ++k) {
        wants.push_back({idx[k], r, static_cast<uint32_t>(device_offset + k)});
      }
    }
    std::sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) { return a.index < b.index; });
    std::vector<uint64_t> batch;
    std::vector<uint8_t> out;
    for (size_t i = 0; i < wants.size();) {
      if (cancel_.load()) return FailedPreconditionError("cancelled");
      size_t j = i, chunks = 0;
      uint64_t last_chunk = UINT64_MAX;
      while (j < wants.size()) {
        const uint64_t c = wants[j].index / m;
        if (c != last_chunk) {
          if (chunks == batch_chunks) break;
          ++chunks;
          last_chunk = c;
        }
        ++j;
      }
      batch.resize(j - i);
      for (size_t k = i; k < j; ++k) batch[k - i] = wants[k].index;
      out.resize(batch.size() * kLabel);
      WP_RETURN_IF_ERROR(RecomputeLabels(region, batch.data(), batch.size(), out.data(), threads)
                             .WithContext("expected labels of device " + std::to_string(d)));
      for (size_t k = i; k < j; ++k) {
        std::memcpy(rounds_[wants[k].round].data() + size_t{wants[k].slot} * kLabel, out.data() + (k - i) * kLabel,
                    kLabel);
      }
      i = j;
    }
    device_offset += spec_.devices[d].labels_per_round;
  }
  return Status::Ok();
}

}  // namespace wipeproof

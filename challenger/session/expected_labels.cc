#include "challenger/session/expected_labels.h"

#include <kj/common.h>
#include <sodium.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "kernels/chunk_verifier.h"
#include "kernels/region_labeler.h"

namespace wipeproof {

namespace {

constexpr size_t kLabel = 32;
constexpr size_t kChunksPerThreadPerBatch = 32;

// Raises the calling thread's nice value by `increment` (Linux: nice is per thread, and threads it
// starts inherit it). Best effort: a failure leaves the priority as it was.
void LowerThisThreadsPriority(int increment) {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);
  if (errno != 0) return;
  (void)setpriority(PRIO_PROCESS, tid, std::min(19, now + increment));
}

}  // namespace

std::unique_ptr<ExpectedLabels> ExpectedLabels::Start(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges) {
  std::unique_ptr<ExpectedLabels> e(new ExpectedLabels(spec, challenges));
  e->worker_ = std::thread([p = e.get()] { p->Work(); });
  return e;
}

ExpectedLabels::ExpectedLabels(const ExpectedLabelsSpec& spec, const ChallengeSet& challenges)
    : spec_(spec), challenges_(challenges) {
  threads_ = spec_.threads > 0 ? spec_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  size_t bytes = 0;
  offsets_.resize(challenges.devices());
  for (size_t d = 0; d < challenges.devices(); ++d) {
    for (uint32_t b = 0; b < challenges.batches(); ++b) {
      offsets_[d].push_back(bytes);
      bytes += challenges.Indices(d, b).size() * kLabel;
    }
  }
  first_phase_end_ = challenges.batches();
  if (challenges.occupancy_batches() > 0 && challenges.devices() > 0) {
    // A group gives the device with the fewest labels per occupancy batch a full work unit.
    size_t fewest = SIZE_MAX;
    for (size_t d = 0; d < challenges.devices(); ++d) {
      fewest = std::min(fewest, challenges.Indices(d, challenges.first_occupancy_batch()).size());
    }
    const size_t unit_chunks = kChunksPerThreadPerBatch * static_cast<size_t>(threads_);
    group_ = static_cast<uint32_t>(std::max<size_t>(1, (unit_chunks + fewest - 1) / std::max<size_t>(1, fewest)));
    group_ = std::min(group_, challenges.occupancy_batches());
    lookahead_ = 2 * group_;
    first_phase_end_ = std::min(challenges.batches(), challenges.first_occupancy_batch() + lookahead_);
  }
  wanted_batches_ = first_phase_end_;
  auto labels = SecretBuffer::Allocate(bytes);
  if (labels.ok()) {
    labels_ = std::move(labels).value();
  } else {
    status_ = labels.status();  // Work() reports it
  }
}

ExpectedLabels::~ExpectedLabels() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_.store(true);
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
}

bool ExpectedLabels::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  return first_phase_done_;
}

Status ExpectedLabels::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  changed_.wait(lock, [this] { return first_phase_done_; });
  return status_;
}

Status ExpectedLabels::WorkerStatus() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

void ExpectedLabels::AskFor(uint32_t batch) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t wanted = std::min<uint64_t>(challenges_.batches(), uint64_t{batch} + 1 + lookahead_);
    if (wanted <= wanted_batches_) return;
    wanted_batches_ = static_cast<uint32_t>(wanted);
  }
  changed_.notify_all();
}

void ExpectedLabels::Finish(Status status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(status);
    first_phase_done_ = true;
  }
  changed_.notify_all();
}

void ExpectedLabels::Work() {
  if (spec_.test_delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(spec_.test_delay_us));
  Status status = WorkerStatus();  // the constructor's allocation
  if (status.ok()) status = ComputeBatches(0, first_phase_end_, threads_, /*progress=*/true);
  if (status.ok()) ready_batches_.store(first_phase_end_, std::memory_order_release);
  Finish(status);
  // The second phase: occupancy batches in send order, a group whenever the session's asks run
  // within LookaheadBatches() of what is ready.
  uint32_t ready = first_phase_end_;
  if (!status.ok() || ready >= challenges_.batches()) return;
  const int threads = std::max(1, threads_ - 1);
  LowerThisThreadsPriority(kSecondPhaseNiceIncrement);
  if (spec_.second_phase_started) spec_.second_phase_started(threads);
  while (status.ok() && ready < challenges_.batches()) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return cancel_.load() || ready < wanted_batches_; });
    }
    if (cancel_.load()) return;
    const uint32_t end = std::min(challenges_.batches(), ready + group_);
    status = ComputeBatches(ready, end, threads, /*progress=*/false);
    if (!status.ok()) break;
    ready = end;
    ready_batches_.store(ready, std::memory_order_release);
  }
  if (!status.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = status;
  }
}

Status ExpectedLabels::ComputeBatches(uint32_t first, uint32_t end, int threads, bool progress) {
  const uint64_t m = spec_.session.chunk_labels;
  const size_t unit_chunks = kChunksPerThreadPerBatch * static_cast<size_t>(threads);
  uint64_t total = 0, done = 0;
  for (size_t d = 0; d < spec_.devices.size(); ++d) {
    for (uint32_t b = first; b < end; ++b) total += challenges_.Indices(d, b).size();
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
    for (uint32_t b = first; b < end; ++b) device_labels += challenges_.Indices(d, b).size();
    wants.reserve(device_labels);  // no reallocation leaves a copy of an index behind
    for (uint32_t b = first; b < end; ++b) {
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
      if (progress && spec_.progress) spec_.progress(done, total);
      i = j;
    }
  }
  return Status::Ok();
}

}  // namespace wipeproof
